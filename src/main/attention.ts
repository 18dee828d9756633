/**
 * Desktop notifications for work that stopped on something only the operator can fix: told once
 * per reason (not once per photo), and again only after work has moved in between.
 */
import type { ItemView } from '../shared/studio';

const MESSAGES = {
  no_diamonds: 'Not enough diamonds: photos wait and go on by themselves once the balance allows.',
  daily_cap: "Today's request cap is reached: photos wait for the next UTC day.",
  ceiling: 'A folder reached its diamond ceiling: raise it in Hot folders to go on.',
  uncertain:
    'A submission may or may not have been charged: check it on the batch board before it is sent again.',
} as const;
type Reason = keyof typeof MESSAGES;

export class AttentionNotifier {
  private readonly told = new Set<Reason>();

  constructor(private readonly notify: (title: string, body: string) => void) {}

  onItem(item: ItemView): void {
    const reason: string | null = item.uncertain ? 'uncertain' : item.waitReason;
    if (reason && reason in MESSAGES) {
      if (this.told.has(reason as Reason)) return;
      this.told.add(reason as Reason);
      this.notify('Dropshoot needs you', MESSAGES[reason as Reason]);
    } else if (!reason && item.state !== 'queued') {
      this.told.clear(); // work moves again: a new stop deserves a new notification
    }
  }
}
