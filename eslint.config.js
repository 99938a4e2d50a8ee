// ESLint for the whole tree (flat config). Fast rules only (no type-aware rules: the typecheck is
// `tsc`); the house rules are the import ones below. Prettier owns the format.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { readdirSync } from 'node:fs';
import house from './scripts/lint/long-file.js';

const SERVICES = readdirSync(new URL('./services', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
/** The CLI package starts the services, so it alone may import them. */
const LAUNCHER = 'shrooms-agent';
const servicePackage = (dir) => (dir === LAUNCHER ? '@shrooms/shrooms-agent' : `@shrooms/${dir}`);

/** No deep imports into our packages: through their front door (`src/index.ts`) only. */
const deepImports = [
  { group: ['@shrooms/*/*'], message: 'Import a workspace package through its front door (@shrooms/NAME), not its files.' },
  {
    group: ['../**/src/**', '**/libs/*/src/**', '**/services/*/src/**', '**/bench/src/**'],
    message: 'Import another package by its name, not by a path into its src/.',
  },
];

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'services/shrooms-agent/bundle/**',
      '.state/**',
      'test-output/**',
      'coverage/**',
      'bench/results/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...nodeGlobals() } },
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-import-type-side-effects': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      'no-restricted-imports': ['error', { patterns: deepImports }],
    },
  },
  // No services/* package imports another (the CLI package that starts them aside).
  ...SERVICES.filter((dir) => dir !== LAUNCHER).map((dir) => ({
    files: [`services/${dir}/**/*.{ts,js,mjs}`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...deepImports,
            {
              group: SERVICES.filter((other) => other !== dir).map(servicePackage),
              message: 'Services meet only over NATS and libs: put the contract in libs/protocol and the client in libs/client.',
            },
          ],
        },
      ],
    },
  })),
  // Front doors name what they export.
  {
    files: ['libs/*/src/index.ts', 'services/*/src/index.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportAllDeclaration[exported=null]', message: 'A front door names its exports: no `export *`.' },
      ],
    },
  },
  // The dashboard's page script runs in a browser: no Node, nothing but its own modules, and no
  // markup from strings (every text it shows is user input: createElement and textContent only).
  {
    files: ['services/gateway/src/dashboard/app/**/*.ts'],
    languageOptions: { globals: { window: 'readonly', document: 'readonly', location: 'readonly', EventSource: 'readonly' } },
    rules: {
      'no-var': 'error',
      'prefer-const': 'error',
      'no-restricted-globals': ['error', 'process', 'Buffer', 'require', 'module', '__dirname', 'global'],
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(?!\\.\\.?/)', message: 'The page script imports only its own modules (and ../wire.js types).' }] },
      ],
      'no-restricted-properties': [
        'error',
        ...['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'write', 'writeln'].map((property) => ({
          property,
          message: 'Build elements with h() and textContent: texts are user input.',
        })),
      ],
    },
  },
  // Tests and test tooling poke at payloads they do not type.
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'libs/testing/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  // Every source file, tests included: one over 300 lines says at its top why (scripts/lint/long-file.js).
  {
    plugins: { house },
    rules: { 'house/long-file-note': 'error' },
  },
);

function nodeGlobals() {
  const names = [
    'process',
    'console',
    'Buffer',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'clearImmediate',
    'URL',
    'URLSearchParams',
    'fetch',
    'Response',
    'Request',
    'Headers',
    'AbortController',
    'AbortSignal',
    'TextEncoder',
    'TextDecoder',
    'structuredClone',
    'queueMicrotask',
    'performance',
    'globalThis',
    'crypto',
    'Intl',
    'WebAssembly',
    'FormData',
    'Blob',
    'ReadableStream',
    'WritableStream',
    'TransformStream',
    'EventTarget',
    'Event',
    'MessageChannel',
    'BroadcastChannel',
    'DOMException',
    'NodeJS',
  ];
  return Object.fromEntries(names.map((n) => [n, 'readonly']));
}
