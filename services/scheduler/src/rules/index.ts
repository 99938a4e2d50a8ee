export * from './schema.js';
export * from './time.js';
export * from './occurrences.js';
export * from './shorthand.js';
export * from './format.js';
export * from './missed.js';
