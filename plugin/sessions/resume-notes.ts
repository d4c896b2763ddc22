import type { SessionRecord } from "../../governance/session/session-record.ts";

/**
 * The resume context of a resumed turn, built once (it reads the descendants' records) and then sent unchanged on
 * every step of that turn: the text is what was true when the session came back, not a view that moves while the
 * subagents are re-run. Keyed by the resume's instant; an entry goes when its session's resume is over.
 */
export class ResumeNotes {
  readonly #texts = new Map<string, { at: number; text: string }>();

  async textFor(record: SessionRecord, build: () => Promise<string>): Promise<string | undefined> {
    const resume = record.resume;
    if (!resume) {
      this.#texts.delete(record.sessionId);
      return undefined;
    }
    const known = this.#texts.get(record.sessionId);
    if (known?.at === resume.at) return known.text;
    const text = await build();
    this.#texts.set(record.sessionId, { at: resume.at, text });
    return text;
  }

  forget(sessionId: string): void {
    this.#texts.delete(sessionId);
  }
}
