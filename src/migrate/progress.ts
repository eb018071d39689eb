/** One step's progress: `done` of `total` items (documents, datasets). */
export interface MigrationProgress {
  step: 'export' | 'import' | 'parse' | 'verify' | 'rollback';
  done: number;
  total: number;
  /** The item just finished (a file or dataset name). */
  item?: string;
}

/** Options every migration function takes. */
export interface MigrationHooks {
  onProgress?: (p: MigrationProgress) => void;
  /** Warnings and notes as they happen (they are in the summary too). Never given a key. */
  log?: (level: 'info' | 'warn', message: string) => void;
}

export class Reporter {
  readonly warnings: string[] = [];
  constructor(private readonly h: MigrationHooks) {}
  warn(msg: string): void {
    this.warnings.push(msg);
    this.h.log?.('warn', msg);
  }
  info(msg: string): void {
    this.h.log?.('info', msg);
  }
  progress(p: MigrationProgress): void {
    this.h.onProgress?.(p);
  }
}

export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
