"""Serve the scripted stub LLM (not a model) on 127.0.0.1 for the demo and tests."""
from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from evaluations.running.stub_llm import StubServer, default_scripts


class Command(BaseCommand):
    help = "Serve scripted terminus-2 replies as an OpenAI-compatible endpoint on 127.0.0.1."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=getattr(settings, "STUB_LLM_PORT", 8765))

    def handle(self, *args, **options):
        server = StubServer(options["port"], default_scripts())
        self.stdout.write(f"scripted stub LLM (not a model) on {server.base_url}; Ctrl-C stops it")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
