# One image for every dgdrf node role (bootstrap, collector, gateway, server, user).
#   docker build -t dgdrf .          (installs the project and its dependencies from PyPI)
# Offline builds: put wheels of dgdrf and its dependencies in ./wheels first
# (pip wheel --wheel-dir wheels '.[cluster]'); they are then installed with no index.
# With the `cluster` extra (Dask): the compose file's sweep profile runs its workers.
FROM python:3.11-slim-bookworm

COPY . /src
RUN python3 -m venv /opt/dgdrf \
 && if ls /src/wheels/*.whl >/dev/null 2>&1; then \
        /opt/dgdrf/bin/pip install --no-cache-dir --no-index --find-links /src/wheels 'dgdrf[cluster]'; \
    else \
        /opt/dgdrf/bin/pip install --no-cache-dir '/src[cluster]'; \
    fi \
 && rm -rf /src

ENV PATH=/opt/dgdrf/bin:$PATH PYTHONUNBUFFERED=1
# the role and its flags come from the command or from DGDRF_* environment variables
ENTRYPOINT ["dgdrf", "node"]
