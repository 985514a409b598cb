# Container image for the rlsolver service. libtorch comes from the torch wheel on PyPI (the only
# source reachable at build time); the runtime stage keeps the venv (torch/lib) and the binary.
# BASE picks the runtime image (default: the public Debian image); BUILD_BASE the build stage's,
# which needs a Rust toolchain (default: the public Rust image on the same Debian release).
ARG BASE=debian:bookworm-slim
ARG BUILD_BASE=rust:1-bookworm
FROM ${BUILD_BASE} AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv make g++ ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make build
# SIMULATORS=1 adds gymnasium with MuJoCo and PyBullet to the venv for `gymnasium:<id>` envs
# (the Python bridge; about 200 MB more).
ARG SIMULATORS=0
RUN if [ "$SIMULATORS" = 1 ]; then make simulators; fi

FROM ${BASE}
# python3: the interpreter the venv links to, which the Gymnasium bridge's workers run.
RUN apt-get update && apt-get install -y --no-install-recommends libgomp1 ca-certificates curl python3 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/rlsolver --create-home rlsolver
# Same absolute path as at build time, so the embedded runpath resolves.
COPY --from=build /src/.venv /src/.venv
COPY --from=build /src/target/release/rlsolver /usr/local/bin/rlsolver
# The shipped policies, verified by sha256 when the server starts.
COPY --from=build /src/models /opt/rlsolver/models
# Without API keys (RLSOLVER_API_KEYS or RLSOLVER_API_KEYS_FILE at run time) the server binds to
# loopback only and says so; give keys to serve 0.0.0.0:8080.
ENV RLSOLVER_HOST=0.0.0.0 RLSOLVER_PORT=8080 RLSOLVER_MODELS_DIR=/opt/rlsolver/models RLSOLVER_DATA_DIR=/var/lib/rlsolver/data \
    RLSOLVER_PYTHON=/src/.venv/bin/python
EXPOSE 8080
USER rlsolver
WORKDIR /var/lib/rlsolver
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD curl -fsS http://127.0.0.1:8080/health || exit 1
ENTRYPOINT ["rlsolver"]
CMD ["serve"]
