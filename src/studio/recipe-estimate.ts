/**
 * What a recipe will cost for a number of photos, before anything is started: diamonds at the
 * price the scheduler admits photos at, and requests at the usual number of polls per job,
 * against the balance and today's request budget.
 */
import { requestJobGroup, type Estimate, type Recipe } from '../shared/studio';
import type { StudioEngine } from './engine';
import { typicalPollRequests } from './poll';

/** Requests per photo as the estimate counts them: upload and submit, plus the usual polls less one. */
const requestsPerPhoto = (group: string): number => 2 + typicalPollRequests(group) - 1;

export async function estimateRecipe(
  engine: StudioEngine,
  recipe: Recipe,
  photos: number,
): Promise<Estimate> {
  const request = recipe.request;
  // The same price the scheduler admits photos at: learnt from the balance or a 402 when known.
  await engine.spending.loadPrices();
  await engine.spending.loadShotCountFor(recipe);
  const perPhoto = engine.spending.quote(recipe)?.diamonds ?? 0;
  const budget = await engine.budget();
  const diamonds = perPhoto * photos;
  const requests = photos * requestsPerPhoto(requestJobGroup(request));
  // Against the cap in use (the service's as remembered when lower), as the board shows it.
  const requestsLeftToday = budget.requestsLeftToday;
  return {
    photos,
    diamonds,
    requests,
    diamondBalance: budget.diamondBalance,
    requestsLeftToday,
    affordable: budget.diamondBalance === null || budget.diamondBalance >= diamonds,
    withinRequestBudget: requestsLeftToday === null || requestsLeftToday >= requests,
  };
}

/**
 * What these recipes cost together, one photo each, at the price the scheduler admits photos at
 * (null: a price is not known). Shared by the redo and generate-again answers and their confirms.
 * `ask: false` sends nothing (prices and shot counts as known): a price asked at every focus must
 * not spend requests while the service does not answer.
 */
export async function priceOfRecipes(
  engine: StudioEngine,
  recipes: readonly Recipe[],
  ask = true,
): Promise<number | null> {
  if (!recipes.length) return 0;
  if (ask) {
    await engine.spending.loadPrices().catch(() => undefined);
    for (const recipe of recipes)
      await engine.spending.loadShotCountFor(recipe).catch(() => undefined);
  }
  if (!engine.spending.pricesKnown) return null;
  let diamonds = 0;
  for (const recipe of recipes) {
    const quote = engine.spending.quote(recipe);
    if (!quote) return null;
    diamonds += quote.diamonds;
  }
  return diamonds;
}
