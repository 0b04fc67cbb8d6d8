/**
 * Turns what a person types into an FTS5 query that cannot be a syntax error: every word is a
 * quoted string (so `gpt-4.1`, `e-mail`, `don't`, `C++`, `what?`, `ada@example.com` and `NOT` are
 * searched as text, not parsed as operators), a trailing `*` keeps a prefix search, and an
 * explicitly quoted phrase stays a phrase. Terms are ANDed.
 */

export type SearchSyntax = 'terms' | 'fts5';

export interface SearchTerm {
  /** The text as typed (without quotes or a trailing `*`). */
  readonly text: string;
  readonly prefix: boolean;
  readonly phrase: boolean;
}

const SEARCHABLE = /[\p{L}\p{N}]/u;

/** Splits user text into terms: quoted phrases, then whitespace-separated words. */
export function parseSearchTerms(query: string): SearchTerm[] {
  const terms: SearchTerm[] = [];
  const pattern = /"([^"]*)"(\*?)|(\S+)/g;
  for (const match of query.matchAll(pattern)) {
    const [, phrase, phraseStar, word] = match;
    if (phrase !== undefined) {
      const text = phrase.trim();
      if (SEARCHABLE.test(text)) terms.push({ text, prefix: phraseStar === '*', phrase: true });
      continue;
    }
    // A lone quote (an unterminated phrase) is just punctuation.
    const raw = (word ?? '').replace(/"/g, '');
    const prefix = raw.endsWith('*');
    const text = raw.replace(/\*+$/, '');
    if (SEARCHABLE.test(text)) terms.push({ text, prefix, phrase: false });
  }
  return terms;
}

/** The FTS5 MATCH expression for the terms (null when nothing searchable was typed). */
export function toFtsQuery(terms: readonly SearchTerm[]): string | null {
  if (terms.length === 0) return null;
  return terms
    .map((term) => `"${term.text.replace(/"/g, '""')}"${term.prefix ? '*' : ''}`)
    .join(' ');
}

/** Substrings for the LIKE fallback of a raw FTS5 query: its words without operator characters. */
export function rawQueryLikeTerms(query: string): SearchTerm[] {
  const needle = query
    .replace(/["*()^]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return needle.length === 0 ? [] : [{ text: needle, prefix: false, phrase: true }];
}
