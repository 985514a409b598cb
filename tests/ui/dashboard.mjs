// Drives the dashboard in headless Chromium (Debian's, through playwright-core) against a running
// server; tests/ui_dashboard.rs starts the server, runs this, and checks what it reports against
// the API. Usage:
//   node dashboard.mjs open   BASE SCREENSHOT_DIR GSET_FILE   solve, train, cancel; every view
//   node dashboard.mjs keyed  BASE SCREENSHOT_DIR KEY         the key prompt and session storage
// Prints one JSON object on stdout: what the page showed.
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const [mode, base, shots, arg] = process.argv.slice(2);
const TIMEOUT = 120_000;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  // The machine's network is closed: without these Chromium retries Google's hosts at every start.
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
page.setDefaultTimeout(TIMEOUT);
const consoleErrors = [];
page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
page.on('pageerror', (error) => consoleErrors.push(String(error)));
const failedResponses = [];
page.on('response', (response) => response.status() >= 400 && failedResponses.push(`${response.status()} ${response.url()}`));
// Anything the page asks of another origin is a failure: everything is served by the binary.
const foreign = [];
page.on('request', (request) => {
  if (!request.url().startsWith(base) && !request.url().startsWith('blob:') && !request.url().startsWith('data:')) foreign.push(request.url());
});

const shot = (name) => page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
const points = async (testId) => Number(await page.locator(`[data-testid=${testId}]`).getAttribute('data-points'));
const report = {};

async function waitForPoints(testId, atLeast) {
  await page.waitForFunction(
    ([id, n]) => Number(document.querySelector(`[data-testid=${id}]`)?.dataset.points || 0) >= n,
    [testId, atLeast],
    { timeout: TIMEOUT }
  );
  return points(testId);
}

try {
  await page.goto(`${base}/ui`);
  if (mode === 'open') {
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.locator('.card .figure').first().filter({ hasText: /\d/ }).waitFor();
    report.overview_cards = await page.locator('.card').count();

    await page.click('header nav a[data-nav=problems]');
    await page.locator('[data-testid=problems] tbody tr').first().waitFor();
    report.problems = await page.locator('[data-testid=problems] tbody tr td:first-child').allInnerTexts();
    await shot('problems');

    await page.click('header nav a[data-nav=models]');
    await page.locator('[data-testid=models] tbody tr').first().waitFor();
    report.models = await page.locator('[data-testid=models] tbody tr').count();
    await page.locator('[data-testid=models] tbody tr a').first().click();
    await page.locator('.chart canvas').first().waitFor();
    report.model_curve_points = Number(await page.locator('.chart').first().getAttribute('data-points'));
    await shot('model');

    // A Max-Cut solve from an uploaded Gset file.
    await page.click('header nav a[data-nav=solve]');
    await page.locator('#solve-form').waitFor();
    await page.selectOption('#solve-problem', 'maxcut');
    await page.setInputFiles('#solve-file', arg);
    await page.waitForFunction(() => document.querySelector('#solve-instance').value.length > 0);
    await page.fill('#solve-time-limit', '2');
    await page.fill('#solve-seed', '3');
    await page.click('#solve-submit');
    await page.waitForURL(/#\/solve\/[^/]+$/);
    report.solve_job = page.url().split('/').pop();
    await page.locator('[data-testid=solve-result] pre').waitFor();
    report.solve_state = await page.locator('.facts .badge').first().getAttribute('data-state');
    report.solve_objective = Number((await page.locator('[data-testid=objective]').innerText()).replace(/,/g, ''));
    report.incumbent_points = await waitForPoints('incumbent-chart', 1);
    await shot('solve');

    // A short training job: the curve gains points while it runs, then it is cancelled.
    await page.click('header nav a[data-nav=training]');
    await page.locator('#train-form').waitFor();
    await page.selectOption('#train-algorithm', 'ppo_discrete');
    await page.selectOption('#train-env', 'CartPole-v1');
    await page.fill('#train-steps', '2000000');
    await page.fill('#train-eval-every', '2048');
    await page.fill('#train-hyperparameters', '{"learning_rate": 0.0003}');
    await page.click('#train-submit');
    await page.waitForURL(/#\/training\/[^/]+$/);
    report.training_job = page.url().split('/').pop();
    report.curve_points_first = await waitForPoints('learning-curve', 2);
    report.curve_points_later = await waitForPoints('learning-curve', report.curve_points_first + 2);
    report.steps_shown = Number((await page.locator('[data-testid=steps]').innerText()).replace(/,/g, ''));
    await shot('training');
    await page.click('#cancel-job');
    await page.locator('.facts .badge[data-state=cancelled]').waitFor();
    report.training_state = 'cancelled';
    // An artifact downloads through the page (fetched with the key, handed over as a file).
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=artifacts] a:text-is("config.json")')]);
    report.downloaded_name = download.suggestedFilename();
    report.downloaded_config = readFileSync(await download.path(), 'utf8');

    // The training list and the overview now list both jobs.
    await page.click('header nav a[data-nav=training]');
    await page.locator(`[data-testid=training-jobs] tr[data-id="${report.training_job}"]`).waitFor();
    await page.click('header nav a[data-nav=home]');
    await page.locator(`[data-testid=solve-jobs] tr[data-id="${report.solve_job}"]`).waitFor();
    await shot('overview');
    // A small population (started through the API: the page watches populations, it does not
    // configure them) appears in the open list without a reload; its page fills its leaderboard
    // as rounds are evaluated, then it is cancelled.
    await page.click('header nav a[data-nav=populations]');
    await page.getByRole('heading', { name: 'Populations' }).waitFor();
    report.population = await page.evaluate(async () => {
      const response = await fetch('/v1/populations', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          algorithm: 'dqn', env: 'CartPole-v1', scheme: 'pbt', size: 2, total_steps: 200000, interval_steps: 1000,
          seed: 1, eval_episodes: 3, hyperparameters: { learning_starts: 200 },
          explore: { learning_rate: { min: 1e-4, max: 3e-3, log: true } },
        }),
      });
      return (await response.json()).id;
    });
    await page.locator(`[data-testid=populations] a[href="#/populations/${report.population}"]`).click();
    await page.locator('[data-testid=leaderboard] tbody tr').first().waitFor();
    report.leaderboard_rows = await page.locator('[data-testid=leaderboard] tbody tr').count();
    await shot('population');
    await page.click('#cancel-population');
    await page.locator('.facts .badge[data-state=cancelled]').waitFor();
    report.population_state = 'cancelled';
    await page.click('header nav a[data-nav=populations]');
    await page.getByRole('heading', { name: 'Populations' }).waitFor();
    await shot('populations');
  } else if (mode === 'keyed') {
    await page.locator('#key-form').waitFor({ state: 'visible' });
    report.prompted = true;
    await shot('key-prompt');
    await page.fill('#key-input', arg);
    await page.click('#key-form button[type=submit]');
    await page.locator('#key-form').waitFor({ state: 'hidden' });
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.locator('.card .figure').first().filter({ hasText: /\d/ }).waitFor();
    report.problems_after_key = Number(await page.locator('.card .figure').first().innerText());
    report.session_storage = await page.evaluate(() => sessionStorage.getItem('rlsolver.apiKey'));
    report.local_storage_keys = await page.evaluate(() => Object.keys(localStorage).length);
    // A new tab of a new context (a new session) asks again.
    const fresh = await browser.newPage();
    await fresh.goto(`${base}/ui`);
    await fresh.locator('#key-form').waitFor({ state: 'visible' });
    report.new_session_prompted = true;
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
} catch (error) {
  await shot(`failure-${mode}`).catch(() => {});
  report.error = String(error && error.stack ? error.stack : error);
} finally {
  report.console_errors = consoleErrors;
  report.failed_responses = failedResponses;
  report.foreign_requests = foreign;
  console.log(JSON.stringify(report));
  await browser.close();
}
