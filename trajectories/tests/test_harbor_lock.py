"""Harbor 0.26's lock.json (and config.json, result.json) read once into a trial's run settings."""
from __future__ import annotations

from trajectories.reading import harbor_lock

DIGEST = "8d43ec4f2d0602a819b961da9112e6df69bcae4c51c9cd1d37f6ba071d01b894"

LOCK = {
    "schema_version": 2,
    "task": {"name": "hash_join", "type": "local", "digest": f"sha256:{DIGEST}", "source": "autolab", "path": "/t/hash_join"},
    "install_only": False,
    "timeout_multiplier": 1.0,
    "agent": {"name": "terminus-2", "import_path": None, "model_name": "openai/gpt-5", "skills": [], "kwargs": {"api_key": "sk-secret"},
              "env": {"OPENAI_API_KEY": "sk-secret"}},
    "environment": {"type": "docker", "override_cpus": None},
    "verifier": {"disable": False, "environment_mode": "separate"},
    "harbor": {"version": "0.26.1", "commit": "abc123"},
}


def test_harbors_lock_is_read_into_typed_settings():
    config = {"timeout_multiplier": 1.0, "agent_timeout_multiplier": 2.0, "environment": {"override_memory_mb": 4096}}
    settings = harbor_lock.read_settings(LOCK, config, {"verifier_environment_mode": "shared"})
    assert settings.has_lock and settings.lock_schema_version == 2
    assert settings.task_digest == DIGEST and settings.task_name == "hash_join"
    assert (settings.harbor_version, settings.harbor_commit) == ("0.26.1", "abc123")
    assert (settings.agent_name, settings.model_name) == ("terminus-2", "openai/gpt-5")
    assert settings.verifier_mode == "separate"  # the lock's word over result.json's
    assert settings.multipliers["timeout_multiplier"] == 1.0 and settings.multipliers["agent_timeout_multiplier"] == 2.0
    assert settings.overrides == {"environment.override_memory_mb": 4096}
    # What a rollout stores keeps no agent kwargs or env: they may hold keys.
    assert "sk-secret" not in repr(settings.as_dict())


def test_without_a_lock_config_and_result_fill_in():
    settings = harbor_lock.read_settings(None, {"timeout_multiplier": 1.0, "agent": {"name": "terminus-2"}},
                                         {"task_checksum": DIGEST, "task_name": "hash_join"})
    assert not settings.has_lock and settings.task_digest == DIGEST and settings.verifier_mode == ""
    assert settings.agent_name == "terminus-2"


def test_a_digest_with_or_without_harbors_prefix_reads_as_the_same_hex():
    """The one normaliser of task digests: the lock's ("sha256:<hex>") and the version's pin (hex) compare equal."""
    for value in (f"sha256:{DIGEST}", DIGEST, f"SHA256:{DIGEST.upper()}", f"  sha256:{DIGEST}\n"):
        assert harbor_lock.digest_hex(value) == DIGEST, value
    for value in (None, "", "sha256:", "sha256:not-hex", 42):
        assert harbor_lock.digest_hex(value) == "", value
