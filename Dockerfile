# Gatehouse on the official Bun image. Build: docker build -t gatehouse .
FROM oven/bun:1.4.5-slim AS deps
WORKDIR /app
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile --production

FROM oven/bun:1.4.5-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
# The image's unprivileged `bun` user (uid 1000); deploy/ runs it with a read-only root filesystem.
USER 1000:1000
EXPOSE 8080 8443 9090
ENTRYPOINT ["bun", "run", "src/main.ts"]
CMD ["serve", "--kube"]
