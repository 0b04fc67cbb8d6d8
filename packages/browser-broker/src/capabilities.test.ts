import { describe, expect, it } from 'vitest';
import {
  browserControlProtocolSupported,
  filterBrowserControlCapabilities,
} from './capabilities.js';
import {
  BROWSER_CONTROL_ALL_CAPABILITIES,
  BROWSER_CONTROL_ARTIFACT_CAPABILITIES,
  BROWSER_CONTROL_CAPABILITIES,
  BROWSER_CONTROL_DEVELOPER_CAPABILITIES,
} from './constants.js';

describe('capability admission', () => {
  it('keeps the developer list disjoint from the base and artifact lists', () => {
    for (const name of BROWSER_CONTROL_DEVELOPER_CAPABILITIES) {
      expect(BROWSER_CONTROL_CAPABILITIES).not.toContain(name);
      expect(BROWSER_CONTROL_ARTIFACT_CAPABILITIES).not.toContain(name);
    }
    expect(BROWSER_CONTROL_CAPABILITIES).toHaveLength(11);
    expect(BROWSER_CONTROL_ALL_CAPABILITIES).toHaveLength(15);
  });

  it('pins the reference allowlists entry by entry', () => {
    expect([...BROWSER_CONTROL_CAPABILITIES].sort()).toEqual([
      'browser_back',
      'browser_click',
      'browser_navigate',
      'browser_press',
      'browser_screenshot',
      'browser_scroll',
      'browser_snapshot',
      'browser_tab_activate',
      'browser_tabs',
      'browser_type',
      'controller.noop',
    ]);
    expect([...BROWSER_CONTROL_ARTIFACT_CAPABILITIES].sort()).toEqual([
      'browser_artifact_download',
      'browser_artifact_upload',
    ]);
    expect([...BROWSER_CONTROL_DEVELOPER_CAPABILITIES].sort()).toEqual([
      'browser_cdp',
      'browser_evaluate',
    ]);
    // Admission without developer mode is exactly base ∪ artifact: nothing more, nothing less.
    const everything = [...BROWSER_CONTROL_ALL_CAPABILITIES, 'browser_console', 'browser_vision'];
    expect([...filterBrowserControlCapabilities(everything, false)].sort()).toEqual(
      [...BROWSER_CONTROL_CAPABILITIES, ...BROWSER_CONTROL_ARTIFACT_CAPABILITIES].sort(),
    );
  });

  it('accepts only the number 1 as the protocol version', () => {
    expect(browserControlProtocolSupported(1)).toBe(true);
    for (const value of [2, true, '1', 0, null, undefined, 1.5, [1]]) {
      expect(browserControlProtocolSupported(value)).toBe(false);
    }
  });

  it('strips developer, unknown and non-string entries without developer mode', () => {
    const filtered = filterBrowserControlCapabilities(
      [
        'browser_snapshot',
        'browser_cdp',
        'browser_evaluate',
        'rm -rf',
        7,
        'browser_artifact_upload',
      ],
      false,
    );
    expect([...filtered].sort()).toEqual(['browser_artifact_upload', 'browser_snapshot']);
  });

  it('keeps developer entries only when developer mode is true', () => {
    const filtered = filterBrowserControlCapabilities(['browser_cdp', 'browser_evaluate'], true);
    expect([...filtered].sort()).toEqual(['browser_cdp', 'browser_evaluate']);
  });

  it('gives the empty set for a non-list', () => {
    expect(filterBrowserControlCapabilities('browser_snapshot', true).size).toBe(0);
    expect(filterBrowserControlCapabilities({ 0: 'browser_snapshot' }, true).size).toBe(0);
  });
});
