// uwaga-gpt: a character-level GPT that learns to write like Shakespeare, and GPT-2 itself.
//   uwaga-gpt train [--preset shakespeare-tiny] [--tokenizer bpe:1024] --out runs/gpt
//   uwaga-gpt eval --checkpoint runs/gpt/checkpoint.safetensors
//   uwaga-gpt sample --checkpoint FILE --prompt "ROMEO:" --tokens 500 --temperature 0.8
//   uwaga-gpt attention --checkpoint FILE --prompt "ROMEO:" --out attention.svg
//   uwaga-gpt explore --checkpoint FILE --prompt "ROMEO:" --out explorer.html
//   uwaga-gpt sample --checkpoint gpt2/model.safetensors --tokenizer gpt2 --prompt "Hello"
//   echo "Hello world" | uwaga-gpt tokenize --tokenizer gpt2
//   uwaga-gpt train --preset gpt2-shakespeare --init gpt2/model.safetensors --out runs/ft
//   uwaga-gpt export --checkpoint runs/ft/checkpoint.safetensors --hf runs/ft/hf
// Wiring only: the model is nn/gpt, sampling nn/sampling, the loop optim/trainer, the text
// data/text/char_corpus and data/text/bpe_tokenizer, GPT-2's weights nn/gpt2_checkpoint.
#include "apps/common/command_line.h"
#include "apps/gpt/gpt_commands.h"

int main(int argc, char** argv) {
  using namespace uwaga::apps;
  return run_modes(
      "uwaga-gpt",
      {{"train", "train a GPT on a text (presets: shakespeare-tiny, shakespeare-small, smoke; --tokenizer bpe:N), or fine-tune GPT-2 (gpt2-shakespeare; --init)", gpt_train},
       {"eval", "validation loss, bits per character and perplexity of a checkpoint", gpt_eval},
       {"sample", "write text from a prompt, streamed as it is generated", gpt_sample},
       {"attention", "draw every layer's and head's attention over a prompt's characters (SVG)", gpt_attention},
       {"explore", "every layer and head of the attention over a prompt, in one HTML page", gpt_explore},
       {"tokenize", "text on stdin -> token ids (--decode: ids -> text), GPT-2's or a checkpoint's", gpt_tokenize},
       {"export", "a checkpoint as Hugging Face's GPT-2 files (model.safetensors, config.json)", gpt_export}},
      argc, argv,
      "train reads tinyshakespeare by default (bash data/fetch.sh tinyshakespeare; --text FILE for\n"
      "another). eval, sample, attention and explore also read a Hugging Face GPT-2\n"
      "model.safetensors (with --tokenizer gpt2, after bash data/fetch.sh gpt2-tokenizer).\n",
      {{"windows", "eval-windows"}});
}
