/**
 * Whether a recipe can be saved or priced: its export file-name pattern and its request (the
 * service's tool rules, ready shoots and shots). Checked before anything is saved or charged.
 */
import type { Recipe } from '../shared/studio';
import { CommandError } from './command-error';
import type { StudioEngine } from './engine';
import { validatePattern } from './export/naming';
import { checkRecipe } from './recipe-check';

/** The recipe's problem in words, or null. */
export async function recipeProblem(
  client: StudioEngine['client'],
  recipe: Recipe,
): Promise<string | null> {
  const naming = validatePattern(recipe.export.naming);
  if (!naming.ok) return `the file-name pattern is not valid: ${naming.error}.`;
  return checkRecipe(client, recipe);
}

/** Throws `invalid_recipe` with the problem when the recipe has one. */
export async function assertRecipeUsable(
  client: StudioEngine['client'],
  recipe: Recipe,
): Promise<void> {
  const problem = await recipeProblem(client, recipe);
  if (problem) throw new CommandError('invalid_recipe', problem);
}
