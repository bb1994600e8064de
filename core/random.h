#pragma once
// Generator: an explicit, seeded source of random numbers. Every random op takes one, so a run is
// reproducible from its seed. The algorithms are spelled out here (xoshiro256** for bits,
// Box–Muller for normals) rather than taken from <random>, whose distributions differ between
// standard libraries: the same seed gives the same tensors on every platform.
#include <cstdint>

namespace uwaga {

class Generator {
 public:
  explicit Generator(std::uint64_t seed = 0) { seed_with(seed); }
  void seed_with(std::uint64_t seed);

  std::uint64_t next_u64();         // defined below: inlined into the loops that draw per element
  double uniform();                 // in [0, 1), 53 random bits: (next_u64() >> 11) · 2^−53
  double normal();                  // standard normal
  std::uint64_t below(std::uint64_t n);  // uniform integer in [0, n)

  // The full state, so checkpoints can save and restore a generator exactly.
  struct State {
    std::uint64_t s[4];
    bool has_spare;
    double spare;
  };
  State state() const { return {{s_[0], s_[1], s_[2], s_[3]}, has_spare_, spare_}; }
  void set_state(const State& st);

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
  bool has_spare_ = false;  // Box–Muller makes normals in pairs
  double spare_ = 0;
};

// xoshiro256** (Blackman and Vigna): 64 bits from a 256-bit state.
inline std::uint64_t Generator::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

inline double Generator::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

}  // namespace uwaga
