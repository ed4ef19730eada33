# The race server. Build and run with Redis: docker compose up
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY shared shared
COPY server server
COPY client client
COPY cli cli
RUN pip install --no-cache-dir .
ENV FLOWERGARDEN_HOST=0.0.0.0 FLOWERGARDEN_PORT=8765
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=3s CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/health', timeout=2)"
CMD ["flowergarden", "serve"]
