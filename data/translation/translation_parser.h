#pragma once
// English back into the grammar's Sentence (data/translation/translation_grammar.h): how the grammar
// translates a sentence it did not sample ("we are eating bread" -> its Sentence -> "estamos
// comiendo pan") and how a sentence's subject-verb-object triple is recovered.
#include <string>

#include "data/translation/translation_grammar.h"

namespace uwaga::translation {

// The Sentence whose English is `english` (tokenized). Throws uwaga::Error
// "translation corpus: '<english>' is not a sentence of the grammar" when there is none.
Sentence parse_sentence(const std::string& english);

// The NounPhrase whose English is `english` (tokenized): "the red houses". Throws uwaga::Error
// "translation corpus: '<english>' is not a noun phrase of the grammar" when there is none.
NounPhrase parse_noun_phrase(const std::string& english);

}  // namespace uwaga::translation
