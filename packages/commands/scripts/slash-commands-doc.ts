import {
  COMMAND_CATEGORIES,
  COMMAND_REGISTRY,
  type CommandDef,
  commandUsage,
  SLACK_BUILTIN_COMMANDS,
  SLACK_VIA_HERMES_ONLY,
  visibleAliases,
} from '../src/index.js';

/** The generated region of `docs/slash-commands.md` sits between these two lines. */
export const BEGIN_MARKER =
  '<!-- BEGIN GENERATED: slash-commands (pnpm --filter @hermes/commands docs:generate) -->';
export const END_MARKER = '<!-- END GENERATED: slash-commands -->';

function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

function where(command: CommandDef): string {
  const surfaces: string[] = [];
  if (!command.gatewayOnly) surfaces.push('terminal');
  if (!command.gatewayOnly && command.desktop === null) surfaces.push('desktop');
  if (!command.cliOnly) surfaces.push('chat apps');
  else if (command.gatewayConfigGate !== null)
    surfaces.push(`chat apps when \`${command.gatewayConfigGate}\` is on`);
  return surfaces.length === 3 ? 'everywhere' : surfaces.join(', ');
}

function whileBusy(command: CommandDef): string {
  if (command.cliOnly && command.gatewayConfigGate === null) return '—';
  switch (command.busyPolicy) {
    case 'dispatch':
      return 'runs at once';
    case 'interrupt_then_dispatch':
      return 'stops the answer, then runs';
    case 'reject':
      return 'refused until the answer ends';
  }
}

function onSlack(command: CommandDef): string {
  if (command.cliOnly && command.gatewayConfigGate === null) return '—';
  if (SLACK_BUILTIN_COMMANDS.has(command.name) || SLACK_VIA_HERMES_ONLY.has(command.name))
    return `\`/hermes ${command.name}\``;
  return `\`/${command.name}\``;
}

const HEADINGS = [
  'Command',
  'Aliases',
  'What it does',
  'Where',
  'While the agent is answering',
  'On Slack',
];

/** A Markdown table with every column padded to its widest cell, as Biome formats tables. */
function alignedTable(headings: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = headings.map((heading, column) =>
    Math.max(3, heading.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${widths.map((width, column) => (cells[column] ?? '').padEnd(width)).join(' | ')} |`;
  return [line(headings), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)];
}

/** The tables, one per category, commands in registry order. */
export function renderSlashCommandsTables(): string {
  const sections: string[] = [];
  for (const category of COMMAND_CATEGORIES) {
    const commands = COMMAND_REGISTRY.filter((command) => command.category === category);
    if (commands.length === 0) continue;
    const rows = commands.map((command) => {
      const aliases = visibleAliases(command)
        .map((alias) => `\`/${alias}\``)
        .join(', ');
      return [
        `\`${cell(commandUsage(command))}\``,
        aliases || '—',
        cell(command.description),
        where(command),
        whileBusy(command),
        onSlack(command),
      ];
    });
    sections.push([`### ${category}`, '', ...alignedTable(HEADINGS, rows)].join('\n'));
  }
  return sections.join('\n\n');
}

/** `document` with its generated region replaced by the current tables. */
export function renderSlashCommandsDoc(document: string): string {
  const begin = document.indexOf(BEGIN_MARKER);
  const end = document.indexOf(END_MARKER);
  if (begin === -1 || end === -1 || end < begin)
    throw new Error(
      `docs/slash-commands.md must contain the lines\n${BEGIN_MARKER}\n${END_MARKER}`,
    );
  return `${document.slice(0, begin + BEGIN_MARKER.length)}\n\n${renderSlashCommandsTables()}\n\n${document.slice(end)}`;
}
