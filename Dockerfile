# BigMind over stdio in a container:  docker run -i --rm -v bigmind:/data bigmind
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    BIGMIND_DB_PATH=/data/memory.db \
    BIGMIND_USER=bigmind

RUN useradd --create-home --uid 10001 bigmind \
    && mkdir -p /data && chown bigmind:bigmind /data
WORKDIR /app
COPY pyproject.toml README.md PLAN.md ./
COPY bigmind ./bigmind
COPY src ./src
RUN pip install --no-cache-dir . && bigmind version

USER bigmind
VOLUME ["/data"]
ENTRYPOINT ["bigmind"]
CMD ["serve"]
