import { defineConfig, type Options } from 'tsup';

const shared: Options = {
  format: ['esm'],
  sourcemap: true,
  platform: 'node',
  target: 'node20',
  // Start-up time is a feature of a command line: the libraries are bundled into the chunks that
  // use them and tree-shaken, so `hermes gateway status` loads a few files instead of resolving
  // hundreds of modules (yaml alone is ~90). Kept external: the session store (it finds its SQL
  // migrations and its worker next to its own files, and loads the native better-sqlite3), the
  // gateway (started as its own process from its own bin) and the TUI bridge (its own build, loaded
  // only by `hermes tui-bridge`).
  noExternal: [
    /^@hermes\/(agent|commands|config|control-socket|review-engine|supervisor)$/,
    'commander',
    '@clack/prompts',
    'valibot',
    'yaml',
  ],
  external: ['@hermes/session-store', '@hermes/gateway', '@hermes/tui-bridge'],
  // Our packages are bundled from their sources (one module per file), so a chunk takes only the
  // files it uses: `gateway status` gets control-socket's client, not config's YAML parser.
  esbuildOptions(options) {
    options.conditions = ['@hermes/source'];
  },
  // commander is CommonJS: its `require('events')` needs a real `require` inside an ES module.
  banner: {
    js: "import { createRequire as __hermesCreateRequire } from 'node:module';\nconst require = __hermesCreateRequire(import.meta.url);",
  },
};

export default defineConfig([
  // bin.ts is the tiny bootstrap (version, -p/--profile); main.ts and every command module are
  // chunks loaded on demand, so `hermes --version` never loads what `hermes chat` needs.
  // (`pnpm build` empties dist first: the two builds run at once, so neither may clean.)
  { ...shared, entry: ['src/bin.ts', 'src/main.ts'], splitting: true, clean: false },
  // The profile selection every command starts with, and `hermes gateway status` (polled by
  // scripts): each one file tree-shaken for itself. Chunks are shared per file, so as chunks they
  // would carry config's YAML parser, which neither needs. bin.ts loads them by URL, so the first
  // build does not fold them into its chunks.
  {
    ...shared,
    entry: ['src/select-home.ts', 'src/fast-status.ts'],
    splitting: false,
    clean: false,
  },
]);
