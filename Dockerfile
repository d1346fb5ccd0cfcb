# Formcast's image: `formcast serve` by default, `formcast worker` (or any other command) by choice.
# docs/deployment.md explains how to build it, run it with compose.yaml, scale the workers, upgrade and back up.
#
# Two stages. The first installs everything with `npm ci` (its `prepare` script is the build: the server bundle in
# dist/server, the console in dist/console, the embed runtime in dist/embed) and then drops the dev dependencies; the
# second copies only what `formcast serve` reads at run time, onto the same base image, so the native modules built or
# fetched in the first (better-sqlite3, @node-rs/argon2, sharp) meet the same glibc and the same Node.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
# better-sqlite3 downloads a prebuilt binary when it can and compiles itself otherwise (another architecture, or no
# access to GitHub's releases from the build): the compiler and Python are for that case, and stay in this stage.
# The headers node-gyp needs come with the Node image (/usr/local/include/node): pointing at them means it does
# not download them.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local \
    npm_config_fund=false \
    npm_config_audit=false \
    npm_config_update_notifier=false
WORKDIR /app

# The dependencies first, from the manifests alone, so that an edit to the sources reuses this layer. Scripts are
# held back here because the root's `prepare` (the build) needs the sources; `npm rebuild` then runs the
# dependencies' own install scripts (the native modules, esbuild's binary).
COPY package.json package-lock.json ./
COPY packages/form-appearance/package.json packages/form-appearance/
COPY packages/sdk/package.json packages/sdk/
RUN npm ci --ignore-scripts && npm rebuild

# The build: what `npm ci`'s `prepare` runs (scripts/build.mjs). It fails the image when a part is missing: a console
# or an embed runtime that was not built would only show up as a 503 at run time.
COPY . .
RUN npm run build \
 && test -f dist/server/cli/main.js \
 && test -f dist/console/index.html \
 && test -d dist/embed
# Run-time dependencies only. Then what `npm prune` keeps but the server never loads: the workspace packages' links
# (form-appearance is bundled into dist/server, the SDK is not used by the server: the links would point at folders
# the image does not have), TypeScript (a dev dependency that is also an optional peer of a dependency, so npm keeps
# it), and better-sqlite3's sources and objects when it was compiled here (~25 MB; only its .node file is loaded).
RUN npm prune --omit=dev \
 && rm -rf node_modules/@formcast node_modules/typescript \
 && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
 && find node_modules/better-sqlite3/build -mindepth 1 -maxdepth 2 ! -name Release ! -name better_sqlite3.node \
      -exec rm -rf {} + \
 && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
# Owned by root and read-only for the user the service runs as: the program cannot rewrite itself.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The one folder of sources read at run time: the social icons that emails link to (src/pages/social-icons.ts).
COPY --from=build /app/src/pages/social ./src/pages/social
# The native modules must load here, on this stage's glibc, or the image is not made. Then `formcast …` on the PATH:
# it runs the build directly, since bin/formcast chooses between the build and the sources by comparing their dates,
# and the image has no sources to compare.
RUN node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get(); require('@node-rs/argon2'); require('sharp')" \
 && printf '#!/bin/sh\nexec node /app/dist/server/cli/main.js "$@"\n' > /usr/local/bin/formcast \
 && chmod 755 /usr/local/bin/formcast \
 && mkdir -p /app/data/outbox \
 && chown -R node:node /app/data

# The user the Node image provides (uid 1000). /app/data is the one writable place: the SQLite database and its key
# file when DATABASE_URL is not PostgreSQL, the outbox (.eml files) when SMTP_URL is unset. The outbox folder exists
# here so that a volume mounted on it (compose.yaml) starts out owned by that user too.
USER node
VOLUME ["/app/data"]
EXPOSE 3000

# /readyz answers 200 once the server listens and its database answers (`formcast worker` has no HTTP: compose.yaml
# turns this check off for it). Node's fetch, since the slim image has neither curl nor wget.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

CMD ["node", "dist/server/cli/main.js", "serve"]
