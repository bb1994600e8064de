#pragma once
// The word table of the toy English -> Spanish corpus (data/translation/translation_corpus.h): every subject,
// noun, adjective, verb and phrase the grammar uses, with its English and Spanish forms and what
// the grammar needs to know to combine them — a subject's person, a noun's gender and which verbs
// it can follow, an irregular verb's present tense.
#include <array>
#include <vector>

namespace uwaga::translation {

// The five Spanish persons we use (ustedes shares the ellos forms; no vosotros).
enum Person { kYo, kTu, kEl, kNosotros, kEllos };

struct Subject {
  const char* en;
  const char* es;
  Person person;
  bool dropped_in_spanish;  // yo, tú, nosotros: the verb ending already names the person
};

// What a noun can be the object of: a verb lists the tags it accepts.
enum Tag : unsigned {
  kEdible = 1u << 0,
  kDrinkable = 1u << 1,
  kCookable = 1u << 2,
  kReadable = 1u << 3,
  kWritable = 1u << 4,
  kOpenable = 1u << 5,
  kWashable = 1u << 6,
  kPortable = 1u << 7,
  kBreakable = 1u << 8,
  kUsable = 1u << 9,
  kFindable = 1u << 10,
  kMakeable = 1u << 11,
  kBuyable = 1u << 12,  // have, want, need, buy, sell: anything
  kVisible = 1u << 13,  // see, watch: anything
};
constexpr unsigned kAnything = kBuyable | kVisible;

// Which adjectives suit a noun, by kind.
enum AdjectiveKind : unsigned {
  kColour = 1u << 0,
  kSize = 1u << 1,
  kAge = 1u << 2,
  kTaste = 1u << 3,
  kTemperature = 1u << 4,
};
constexpr unsigned kLooks = kColour | kSize | kAge;

enum Gender { kMasculine, kFeminine };

struct Noun {
  const char* en;     // singular
  const char* en_pl;  // plural
  const char* es;
  const char* es_pl;
  Gender gender;
  bool mass;  // bread, milk: no plural, no "a", may stand alone
  unsigned tags;
  unsigned adjectives;
};

struct Adjective {
  const char* en;
  const char* es;  // masculine singular; the other forms follow from its ending
  AdjectiveKind kind;
};

struct Verb {
  const char* en;      // base form: "eat", "look for"
  const char* en_3s;   // "eats", "looks for"
  const char* en_ing;  // "eating", "looking for"
  const char* es;      // infinitive: "comer"
  // Present-tense forms (yo, tú, él, nosotros, ellos) of irregular verbs; empty for regular ones.
  std::array<const char*, 5> es_present;
  const char* es_gerund;  // nullptr: the regular -ando / -iendo
  unsigned objects;       // tags of the nouns it takes; 0: none
  bool object_optional;   // "we are eating" as well as "we are eating bread"
  bool progressive;       // false for stative verbs: not "i am having a car"
};

// The tenses a phrase suits: "every day" only the simple present, "now" only the progressive.
enum class When { kAny, kSimple, kProgressive };

struct Phrase {
  const char* en;
  const char* es;
  When when;
};

// The tables. The grammar refers to their entries by index: subject 4 is "we", verb 0 is "eat".
extern const std::vector<Subject> kSubjects;
extern const std::vector<Noun> kNouns;
extern const std::vector<Adjective> kAdjectives;
extern const std::vector<Verb> kVerbs;
extern const std::vector<Phrase> kPhrases;

}  // namespace uwaga::translation
