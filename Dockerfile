# Container image for the rlsolver service. libtorch comes from the torch wheel on PyPI (the only
# source reachable at build time); the runtime stage keeps just torch/lib and the binary.
FROM rust:1-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make build

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libgomp1 ca-certificates && rm -rf /var/lib/apt/lists/*
# Same absolute path as at build time, so the embedded runpath resolves.
COPY --from=build /src/.venv /src/.venv
COPY --from=build /src/target/release/rlsolver /usr/local/bin/rlsolver
# The shipped policies, verified by sha256 when the server starts.
COPY --from=build /src/models /opt/rlsolver/models
ENV RLSOLVER_HOST=0.0.0.0 RLSOLVER_PORT=8080 RLSOLVER_MODELS_DIR=/opt/rlsolver/models
EXPOSE 8080
USER nobody
ENTRYPOINT ["rlsolver"]
CMD ["serve"]
