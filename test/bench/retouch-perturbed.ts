/**
 * Does amateur_to_pro hold under the casts and exposures of photos we have not seen? Each garment
 * photo of ../shared/eval gets the same change (a white balance 300-1000 K warmer or cooler, a
 * green or magenta tint, +0.5 or +1 EV clipping at white; the mask unchanged) and is scored by
 * `scoreCast` (test/integration/helpers/cast-score.ts) against the original inside its mask: the
 * median Delta E 2000 with each channel matched (`damage`, issue 11 item 3: <= 3), the backdrop's
 * mean and median level (>= 250) and share under 250 in a channel (the as-shot eval: <= 2.5%), and
 * the share of the garment bleached or newly clipped (<= 2%). `original` is the as-shot baseline.
 *
 * `npm run -s bench -- retouch-perturbed`; to choose: RETOUCH_VARIATIONS=warm600,ev+1 and
 * RETOUCH_IDS=00055_00,049940_1; RETOUCH_AS_GIVEN=1 scores the changed photo itself, untouched. Direct: `npx tsx test/bench/retouch-perturbed.ts`.
 */
import { type Change, linearGains, scoreCast } from '../integration/helpers/cast-score';
import { garmentIds } from './quality';
import type { Row } from './shared';
import { whiteBalanceGains } from './white-balance';

export const RETOUCH_VARIATIONS: Record<string, Change> = {
  original: (rgb) => rgb,
  warm300: linearGains(whiteBalanceGains(300)),
  warm600: linearGains(whiteBalanceGains(600)),
  warm1000: linearGains(whiteBalanceGains(1000)),
  cool600: linearGains(whiteBalanceGains(-600)),
  cool1000: linearGains(whiteBalanceGains(-1000)),
  /** Green up or down 8% in linear light against red and blue: a fluorescent or LED tint. */
  green: linearGains([1, 1.08, 1].map((g) => g / 1.08)),
  magenta: linearGains([1, 0.92, 1]),
  'ev+0.5': linearGains([Math.SQRT2, Math.SQRT2, Math.SQRT2]),
  'ev+1': linearGains([2, 2, 2]),
  /** A warm lamp and half a stop over: both weak spots at once. */
  'warm600+0.5': linearGains(whiteBalanceGains(600).map((g) => g * Math.SQRT2)),
};

const list = (v: string | undefined) => v?.split(',').filter(Boolean);

export async function retouchPerturbed(): Promise<Row[]> {
  const names = list(process.env.RETOUCH_VARIATIONS) ?? Object.keys(RETOUCH_VARIATIONS);
  const ids = list(process.env.RETOUCH_IDS) ?? garmentIds();
  const rows: Row[] = [];
  for (const name of names) {
    const change = RETOUCH_VARIATIONS[name];
    if (!change) throw new Error(`unknown variation ${name}`);
    let worst = { id: '', damage: 0 };
    let failing = 0;
    let lowest = 255;
    let maxShaded = 0;
    let maxBleached = 0;
    for (const id of ids) {
      const s = await scoreCast(
        id,
        { photo: change },
        process.env.RETOUCH_AS_GIVEN ? async (jpeg) => jpeg : undefined,
      );
      const fails = s.damage > 3 || s.backdrop < 250 || s.shaded > 0.025 || s.bleached > 0.02;
      if (fails) failing++;
      if (s.damage > worst.damage) worst = { id, damage: s.damage };
      lowest = Math.min(lowest, s.backdrop);
      maxShaded = Math.max(maxShaded, s.shaded);
      maxBleached = Math.max(maxBleached, s.bleached);
      console.log(
        `${name} ${id} damage ${s.damage.toFixed(2)} left ${s.castLeft.toFixed(2)} backdrop mean ${s.backdrop.toFixed(1)} median ${s.backdropMedian.toFixed(1)} under250 ${(100 * s.shaded).toFixed(2)} % bleached ${(100 * s.bleached).toFixed(2)} %${fails ? ' FAIL' : ''}`,
      );
    }
    const measured = `${failing}/${ids.length} fail; worst damage ${worst.damage.toFixed(2)} (${worst.id}), backdrop mean min ${lowest.toFixed(1)}, under250 max ${(100 * maxShaded).toFixed(2)} %, bleached max ${(100 * maxBleached).toFixed(2)} %`;
    console.log(`== ${name}: ${measured}`);
    rows.push({
      name: `retouch ${name}`,
      measured,
      ratio: worst.damage / 3,
      target: 'damage<=3',
      pass: failing === 0,
    });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) await retouchPerturbed();
