export * from './a2a.js';
export * from './errors.js';
export * from './limits.js';
export * from './metadata.js';
export * from './names.js';
export * from './sdk.js';
export * from './subjects.js';
export * from './wire.js';
