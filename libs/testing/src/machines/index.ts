export * from './rig.js';
export * from './units.js';
