FROM python:3.12-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 LITELLM_LOCAL_MODEL_COST_MAP=True
RUN apt-get update && apt-get install -y --no-install-recommends tmux bubblewrap git && rm -rf /var/lib/apt/lists/*
# The workers drive the host's Docker engine (the docker backend): its CLI and Compose plugin.
COPY --from=docker:27-cli /usr/local/bin/docker /usr/local/bin/docker
COPY --from=docker/compose-bin:v2.29.7 /docker-compose /usr/libexec/docker/cli-plugins/docker-compose
WORKDIR /srv/autolab-site
COPY pyproject.toml README.md ./
COPY autolab_site autolab_site
COPY tasks tasks
COPY evaluations evaluations
COPY trajectories trajectories
RUN pip install --no-cache-dir '.[s3]'
COPY . .
# collectstatic signs nothing: a throwaway key, so that no key is generated into the image.
RUN SECRET_KEY=collectstatic-only AUTOLAB_DATA_DIR=/tmp/collectstatic python manage.py collectstatic --noinput && rm -rf /tmp/collectstatic
EXPOSE 8000
# Threads: a search told to wait (AUTOLAB_SEARCH_BUSY_PAUSE_SEC) or a slow
# client holds a thread, not one of three processes.
CMD ["gunicorn", "autolab_site.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "4"]
