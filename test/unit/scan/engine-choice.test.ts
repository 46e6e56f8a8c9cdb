import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/ground/config.js';
import { engineName } from '../../../src/scans/engine-choice.js';
import { requireChromium } from '../../helpers/chromium.js';

describe('SCAN_ENGINE', () => {
  it('auto: Chromium when its executable is there, jsdom otherwise', () => {
    expect(engineName({ scanEngine: 'auto', chromiumPath: requireChromium() })).toBe('chromium');
    expect(engineName({ scanEngine: 'auto', chromiumPath: '/nowhere/chromium' })).toBe('jsdom');
  });

  it('jsdom whatever is installed', () => {
    expect(engineName({ scanEngine: 'jsdom', chromiumPath: requireChromium() })).toBe('jsdom');
  });

  it('chromium without the browser stops the start, naming both settings and the package', () => {
    expect(() => engineName({ scanEngine: 'chromium', chromiumPath: '/nowhere/chromium' })).toThrow(ConfigError);
    expect(() => engineName({ scanEngine: 'chromium', chromiumPath: '/nowhere/chromium' })).toThrow(/SCAN_ENGINE=chromium, but CHROMIUM_PATH \/nowhere\/chromium .*apt-get install chromium/);
  });
});
