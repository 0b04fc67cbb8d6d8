import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  BEGIN_MARKER,
  END_MARKER,
  renderSlashCommandsDoc,
  renderSlashCommandsTables,
} from '../scripts/slash-commands-doc.js';
import { COMMAND_REGISTRY } from '../src/index.js';

const docPath = fileURLToPath(new URL('../../../docs/slash-commands.md', import.meta.url));

describe('docs/slash-commands.md', () => {
  it('holds the tables the registry generates (run `pnpm --filter @hermes/commands docs:generate`)', () => {
    const committed = readFileSync(docPath, 'utf8');
    expect(committed).toContain(BEGIN_MARKER);
    expect(committed).toContain(END_MARKER);
    expect(renderSlashCommandsDoc(committed)).toBe(committed);
  });

  it('lists every command with its usage and description', () => {
    const tables = renderSlashCommandsTables();
    for (const command of COMMAND_REGISTRY)
      expect(tables, command.name).toContain(command.description);
    expect(tables).toMatch(/\| `\/review \[review instructions\]` +\| — +\|/);
    expect(tables).toContain('`/reasoning [none\\|minimal\\|low\\|medium\\|high\\|xhigh]`');
    expect(tables).toMatch(/\| `\/status` +\| — +\| .* \| `\/hermes status` +\|/);
  });

  it('replaces only the generated region and refuses a document without the markers', () => {
    const document = `intro\n${BEGIN_MARKER}\nold table\n${END_MARKER}\noutro\n`;
    const rendered = renderSlashCommandsDoc(document);
    expect(rendered.startsWith(`intro\n${BEGIN_MARKER}\n\n### Session`)).toBe(true);
    expect(rendered.endsWith(`\n\n${END_MARKER}\noutro\n`)).toBe(true);
    expect(rendered).not.toContain('old table');
    expect(() => renderSlashCommandsDoc('no markers')).toThrow(BEGIN_MARKER);
  });
});
