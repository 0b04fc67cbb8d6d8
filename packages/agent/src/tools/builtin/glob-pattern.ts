/**
 * Turns a file glob into a RegExp over `/`-separated relative paths: `*` within a segment, `**`
 * across segments, `?` one character, `{a,b}` alternatives. A glob without `/` matches the base
 * name anywhere (as ripgrep's `-g` does).
 */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  let depth = 0;
  for (let index = 0; index < glob.length; index += 1) {
    const char = glob[index] as string;
    if (char === '*') {
      if (glob[index + 1] === '*') {
        const slash = glob[index + 2] === '/';
        source += slash ? '(?:.*/)?' : '.*';
        index += slash ? 2 : 1;
      } else source += '[^/]*';
    } else if (char === '?') source += '[^/]';
    else if (char === '{') {
      source += '(?:';
      depth += 1;
    } else if (char === '}' && depth > 0) {
      source += ')';
      depth -= 1;
    } else if (char === ',' && depth > 0) source += '|';
    else source += char.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  const anchored = glob.includes('/') ? `^${source}$` : `(?:^|/)${source}$`;
  return new RegExp(anchored);
}
