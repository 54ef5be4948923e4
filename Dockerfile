# syntax=docker/dockerfile:1
# The timebucket image: one image for every role (`timebucket run --roles …`), `migrate` and
# `topics apply`. Build: docker build -t timebucket:$(node -p "require('./package.json').version") .
# Checked statically in make test (test/deploy/dockerfile.test.ts): no Docker engine runs there.

# The exact Node.js release the tests run on (a tag that no later patch release moves).
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

# Build with the dev dependencies (TypeScript), then throw them away.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json

# Run with production dependencies only, as a non-root user, under tini so that SIGTERM reaches
# node (PID 1 ignores signals it has no handler for) and zombies are reaped.
FROM ${NODE_IMAGE} AS run
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini=0.19.0-1+b3 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# TB_ENV=production: no local-stack defaults; a missing connection setting stops start-up (78).
ENV NODE_ENV=production TB_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
COPY schemas ./schemas
COPY topics ./topics
COPY entities ./entities
# The node image's unprivileged user (uid 1000); Kubernetes' runAsNonRoot checks the number.
USER 1000:1000
EXPOSE 9464
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/cli/main.js"]
CMD ["run"]
