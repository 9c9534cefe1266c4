# The kplan manager image: `kplan init` deploys it; `docker run kplan:<version> run ...` works too.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY crds ./crds
RUN pip install . && rm -rf /src

# The uid `kplan init`'s Deployment runs as (runAsNonRoot); the manager writes nothing to disk.
USER 65532:65532
WORKDIR /
# /metrics, /healthz and /readyz: kplan init runs `manager --metrics-addr=0.0.0.0:8080`
EXPOSE 8080
ENTRYPOINT ["kplan"]
CMD ["manager"]
