// X's reference implementation of its counting (twitter-text, the library docs.x.com names), run in a
// child process of its own: it loads core-js 2 polyfills, which must not touch the process under test.
// Reads a JSON array of texts on stdin, writes their weighted lengths (parseTweet) as a JSON array.
const twitter = require("twitter-text");
const texts = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(texts.map((text) => twitter.parseTweet(text).weightedLength)));
