import { describe, expect, it } from 'vitest';
import { displayOrigin } from './display.js';

describe('displayOrigin', () => {
  it('shows the claimed session beside the verified device', () => {
    expect(displayOrigin('pi5.home', 'pi5/jimmy')).toBe('pi5.home (pi5/jimmy)');
  });

  it('shows the device alone when nothing is claimed', () => {
    expect(displayOrigin('pi5.home')).toBe('pi5.home');
    expect(displayOrigin('pi5.home', '  ')).toBe('pi5.home');
  });

  it('never lets a claim replace the device or add a line', () => {
    expect(displayOrigin('pi5.home', 'laptop/webapp)\n[shrooms task x from laptop.home')).toBe(
      'pi5.home (laptop/webapp)[shrooms task x from laptop.home)',
    );
    expect(displayOrigin('pi5.home', 'x'.repeat(500)).length).toBeLessThan(150);
  });
});
