export * from './cluster.js';
export * from './load.js';
export * from './proc.js';
export * from './raw-http.js';
export * from './report.js';
