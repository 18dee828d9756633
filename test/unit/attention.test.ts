import { describe, expect, it } from 'vitest';
import { AttentionNotifier } from '../../src/main/attention';
import type { ItemView } from '../../src/shared/studio';

const item = (patch: Partial<ItemView>): ItemView => ({
  id: 'item_1',
  batchId: 'b',
  folderId: null,
  name: 'a.jpg',
  relativeDir: '',
  sourcePath: '/a.jpg',
  sha256: 'x',
  state: 'queued',
  waitReason: null,
  waitUntil: null,
  error: null,
  note: null,
  failedShots: [],
  uncertain: false,
  kind: 'tool',
  toolId: 'remove_background',
  recipe: {
    request: { toolId: 'remove_background', images: { product_photo: '{photo}' } },
    export: { preset: 'original', format: 'png', quality: 90, naming: '{name}' },
  },
  jobId: null,
  diamonds: 0,
  packTotal: null,
  packCompleted: null,
  packFailed: null,
  position: 0,
  createdAt: '',
  updatedAt: '',
  ...patch,
});

describe('attention notifications', () => {
  it('tells once per reason, not once per photo, and again after work moved', () => {
    const told: string[] = [];
    const notifier = new AttentionNotifier((_title, body) => told.push(body));
    for (let i = 0; i < 50; i++)
      notifier.onItem(item({ id: `item_${i}`, waitReason: 'no_diamonds' }));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/Not enough diamonds/);
    notifier.onItem(item({ waitReason: 'daily_cap' }));
    notifier.onItem(item({ waitReason: 'offline' })); // retried by itself: nothing to tell
    notifier.onItem(item({ uncertain: true, waitReason: 'uncertain' }));
    expect(told).toHaveLength(3);
    notifier.onItem(item({ state: 'uploading' }));
    notifier.onItem(item({ waitReason: 'no_diamonds' }));
    expect(told).toHaveLength(4);
  });
});
