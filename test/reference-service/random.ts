/** A small seeded generator (mulberry32) whose state can be saved and restored across restarts. */
export class SeededRandom {
  constructor(private state: number) {
    this.state = state >>> 0;
  }
  get snapshot(): number {
    return this.state;
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  chance(probability: number | undefined): boolean {
    return probability !== undefined && probability > 0 && this.next() < probability;
  }
  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }
  int(maxExclusive: number): number {
    return Math.floor(this.next() * maxExclusive);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  hex(length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += this.int(16).toString(16);
    return out;
  }
  uuid(): string {
    const h = this.hex(32);
    const variant = ((this.int(4) + 8) as number).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
  opaque(length = 22): string {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[this.int(alphabet.length)];
    return out;
  }
}
