import { describe, expect, it } from 'vitest';
import { schemeOf } from './endpoint-url.js';

describe('schemeOf', () => {
  it('gives the scheme in lower case without its colon, whatever case the URL is written in', () => {
    expect(schemeOf('http://127.0.0.1:11434/v1')).toBe('http');
    expect(schemeOf('HTTP://LOCALHOST:8000/v1')).toBe('http');
    expect(schemeOf('HttpS://api.openai.com/v1')).toBe('https');
  });

  it('ignores spaces and line breaks around the URL, as the URL parser does', () => {
    expect(schemeOf('  https://openrouter.ai/api/v1 ')).toBe('https');
    expect(schemeOf('\thttp://127.0.0.1:8000/v1\n')).toBe('http');
  });

  it('gives undefined for text that is not a URL', () => {
    expect(schemeOf('not a url')).toBeUndefined();
    expect(schemeOf('')).toBeUndefined();
    expect(schemeOf('127.0.0.1:8000/v1')).toBeUndefined();
    expect(schemeOf('\u00a0http://127.0.0.1:8000/v1')).toBeUndefined();
  });

  it('reads a bare host:port as that host name used as a scheme, so it is neither http nor https', () => {
    expect(schemeOf('localhost:8000/v1')).toBe('localhost');
  });
});
