# Gatehouse as one executable on a minimal base. Build: docker build -t gatehouse .
# Multi-arch: docker buildx build --platform linux/amd64,linux/arm64 -t gatehouse .
# The build stage runs on the build machine's platform and cross-compiles for the target's (Bun fetches
# that platform's runtime from npm); the image holds only the executable (docs/executable.md).
FROM --platform=$BUILDPLATFORM oven/bun:1.4.5-slim AS build
WORKDIR /src
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile --production
COPY src ./src
COPY scripts/build.ts ./scripts/build.ts
ARG TARGETARCH
# `gatehouse version` names it: docker build --build-arg GATEHOUSE_COMMIT=$(git rev-parse --short=12 HEAD) .
ARG GATEHOUSE_COMMIT=unknown
RUN case "$TARGETARCH" in \
      amd64|"") target=linux-x64 ;; \
      arm64) target=linux-arm64 ;; \
      *) echo "no Bun runtime for $TARGETARCH" >&2; exit 1 ;; \
    esac && GATEHOUSE_COMMIT=$GATEHOUSE_COMMIT bun scripts/build.ts --outdir /out --target "$target"

# glibc, CA certificates and tzdata; no shell, no package manager. The executable needs nothing else
# (Bun's runtime is inside it, the default certificate is made in process) but a writable /tmp: the raw
# front keeps a unix socket per listener there. deploy/ mounts an emptyDir; `docker run --read-only` needs
# `--tmpfs /tmp`.
FROM gcr.io/distroless/base-nossl-debian12:nonroot
COPY --from=build /out/gatehouse /gatehouse
# Bun's allocator (mimalloc) keeps pages it has freed instead of returning them to the kernel 10 ms later:
# under load each young-generation collection frees megabytes at once, and returning then re-faulting
# them cost 8–12 % of the CPU a proxied request takes (measured, docs/performance.md), for 35–60 MB more
# resident memory at the high-water mark. Set it to a number of ms (or unset it) to trade back.
ENV MIMALLOC_PURGE_DELAY=-1
# distroless's unprivileged `nonroot` user (uid 65532); deploy/ runs it with a read-only root filesystem.
USER 65532:65532
EXPOSE 8080 8443 9090
ENTRYPOINT ["/gatehouse"]
CMD ["serve", "--kube"]
