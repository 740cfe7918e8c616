# Gatehouse on the official Bun image. Build: docker build -t gatehouse .
FROM oven/bun:1.4.5-slim AS deps
WORKDIR /app
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile --production

FROM oven/bun:1.4.5-slim
WORKDIR /app
ENV NODE_ENV=production
# Bun's allocator (mimalloc) keeps pages it has freed instead of returning them to the kernel 10 ms later:
# under load each young-generation collection frees megabytes at once, and returning then re-faulting
# them cost 8–12 % of the CPU a proxied request takes (measured, docs/performance.md), for 35–60 MB more
# resident memory at the high-water mark. Set it to a number of ms (or unset it) to trade back.
ENV MIMALLOC_PURGE_DELAY=-1
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
# The image's unprivileged `bun` user (uid 1000); deploy/ runs it with a read-only root filesystem.
USER 1000:1000
EXPOSE 8080 8443 9090
ENTRYPOINT ["bun", "run", "src/main.ts"]
CMD ["serve", "--kube"]
