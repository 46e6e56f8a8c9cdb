/**
 * A page with known colours, fonts, classes and custom properties, for the style statistics and
 * the brand score tests. The expected numbers are worked out by hand in those tests.
 */
export const BRAND_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Brand fixture</title>
<style>
:root { --brand-blue: #0b5fff; --brand-radius: 6px; }
body { font-family: "Inter", Arial, sans-serif; font-size: 16px; color: #1a1a1a; background-color: #ffffff; }
h1 { font-family: Merriweather, Georgia, serif; font-size: 2em; color: var(--brand-blue); }
.hero { background-color: rgba(11, 95, 255, 0.5); }
.note { font-size: 12px; color: #767676; }
.btn-primary { background-color: #0b5fff; color: #ffffff; font-family: Inter; font-size: 1rem; font-weight: 700; border-radius: var(--brand-radius); }
.btn-ghost { color: #0a5ffe; background-color: #eeeeee; }
@media (min-width: 1px) { .card { --card-gap: 8px; } }
</style>
</head>
<body>
<header class="hero"><h1>Brand fixture</h1></header>
<main>
  <p>Body text in Inter.</p>
  <p class="note">Small print.</p>
  <button class="btn-primary" type="button">Buy</button>
  <button class="btn-primary" type="button">Sell</button>
  <img class="btn-primary logo" src="/logo.png">
  <a class="btn-ghost" href="/ghost">Ghost</a>
  <a class="btn-ghost" href="/empty"></a>
  <div class="card" style="--card-gap: 4px"><span style="font-family: 'Comic Sans MS'">Odd font</span></div>
  <p hidden>Hidden text</p>
  <div aria-hidden="true"><p>Also hidden</p></div>
  <div style="display: none"><p>Gone</p></div>
  <script>document.write('not text');</script>
</main>
</body>
</html>
`;
