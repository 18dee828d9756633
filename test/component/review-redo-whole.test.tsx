// @vitest-environment jsdom
/**
 * The Review screen says what a redo costs before it is pressed, and that redoing one result of
 * a ready shoot whose shots the service does not name makes the whole shoot again (one job, all
 * its results); a paid redo is confirmed with that price first. Against the reference /v1 service
 * (written from the spec alone: its polls name no shots), a real studio on loopback and the
 * renderer's HTTP transport; charges are read from the service's own ledger.
 */
import path from 'node:path';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { ReviewScreen } from '../../src/renderer/src/screens/ReviewScreen';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { useResults } from '../../src/renderer/src/stores/results-store';
import { useUi } from '../../src/renderer/src/stores/ui-store';
import { referenceWorld, runOnWorld } from '../integration/helpers/reference-studio';
import { SHOOT_02_RECIPE } from '../integration/helpers/studio-fixtures';
import { useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();

// jsdom lays nothing out: the grid's width observer has nothing to observe.
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
};

const EMAIL = 'redo-whole@ref.test';

it('one result of a shoot whose shots are not named: its price and the whole shoot said before the press, confirmed, paid once', async () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  fixture.onCleanup(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });
  const w = await referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 500,
    service: { seed: 7, timeScale: 0.01, jobSeconds: [20, 20], failShots: 0 },
  });
  expect((await runOnWorld(w, { recipe: SHOOT_02_RECIPE })).exported).toBe(1);
  const charges = () => w.service.ledger(EMAIL).filter((e) => e.kind === 'charge');
  const price = -charges()[0]!.delta;
  expect(price).toBeGreaterThan(0);

  const client = fixture.serviceClient(w.service, w.apiKey);
  await fixture.serveStudio({ dataDir: path.join(w.root, 'data'), client, apiKey: w.apiKey });
  await useQueue.getState().load();
  await useResults.getState().load();
  expect(Object.keys(useResults.getState().results)).toHaveLength(3);
  useResults.getState().setFilter('all');
  render(<ReviewScreen />);

  // Before the press: the price of the one job, and that it remakes the whole shoot.
  await waitFor(() =>
    expect(screen.getByTestId('redo-price').textContent).toBe(
      `Redo: about ${price} diamonds, remakes the whole shoot or pack`,
    ),
  );
  fireEvent.click(screen.getByRole('button', { name: /^Redo/ }));
  const confirm = await screen.findByRole('alertdialog', { name: 'Redo 1 result?' });
  expect(confirm.textContent).toContain(`costs about ${price} diamonds`);
  expect(confirm.textContent).toContain(
    'Its shots are not named separately, so redoing one result makes its whole shoot or pack again',
  );
  // Cancelled: nothing declined, nothing paid.
  fireEvent.click(within(confirm).getByRole('button', { name: 'Cancel' }));
  expect(screen.queryByRole('alertdialog')).toBeNull();
  expect(Object.values(useResults.getState().results).map((r) => r.review)).not.toContain(
    'rejected',
  );
  expect(charges()).toHaveLength(1);

  // Confirmed: one job, at the price stated.
  fireEvent.click(screen.getByRole('button', { name: /^Redo/ }));
  const again = await screen.findByRole('alertdialog', { name: 'Redo 1 result?' });
  fireEvent.click(within(again).getByRole('button', { name: `Redo for ${price} diamonds` }));
  await waitFor(() =>
    expect(useUi.getState().notice).toBe(
      `1 photo queued again with the same recipe (about ${price} diamonds); the old result is now rejected.`,
    ),
  );
  await waitFor(() => expect(charges()).toHaveLength(2));
  expect(-charges()[1]!.delta).toBe(price);
}, 120_000);
