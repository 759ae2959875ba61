// The Metal host simulator's launcher: runs one kernel dispatch on host threads.
//
// simulator.py compiles this file once (it is its own translation unit, so the standard headers
// here never see metal_stdlib's empty `device`/`thread` macros) and links it into every simulated
// module's shared object beside the kernel translation unit. tir_sim_launch starts one std::thread
// per lane of a threadgroup; each thread loops over all threadgroups in order (z, y, x), calling the
// kernel's wrapper with its blockIdx and threadIdx, then waits at an end-of-group barrier so the
// next threadgroup cannot overwrite threadgroup memory (function-level statics) early.
//
// Simdgroup functions (simd_shuffle, simd_sum, ...) reach `SimdGroup::exchange` of the calling
// lane's simdgroup (32 consecutive lanes by linear thread index, as in Metal): every active lane
// deposits its value and waits for the others, then reads all of them. Slots alternate between two
// sets by phase, so a lane may start the next exchange while a slower one still reads this one.
// A simdgroup function that only part of a simdgroup reaches is undefined in Metal; here it fails
// the launch, either at once (a lane reaches threadgroup_barrier or the end of the kernel while
// others of its simdgroup wait in an exchange, or lanes meet at different simdgroup calls) or by the
// watchdog's timeout.
//
// threadgroup_barrier in the kernel reaches the same barrier through a thread-local pointer. The
// barrier is our own because std::barrier can do neither of two things we need: give up after a
// timeout, releasing every waiter and failing the launch with a deadlock message; and tell, in each
// phase, whether threads arrived from an in-kernel threadgroup_barrier or from the end of the
// kernel, which exposes a barrier that only some threads of a threadgroup call. Once the launch has
// failed, every barrier returns at once so the threads run to the end of their current threadgroup
// and stop.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#define TIR_SIM_EXPORT __attribute__((visibility("default")))
#define TIR_SIM_INTERNAL __attribute__((visibility("hidden")))

namespace {

using KernelWrapper = void (*)(void** args, unsigned block_x, unsigned block_y, unsigned block_z,
                               unsigned thread_x, unsigned thread_y, unsigned thread_z);

enum class Arrival { from_barrier, from_end_of_kernel };

struct Group {
  unsigned x, y, z;
};

constexpr unsigned kSimdWidth = 32;
constexpr unsigned kMaxSimdBytes = 16;

// The exchange area of one simdgroup. `site` encodes the operation and MSL line (metal_stdlib).
struct SimdGroup {
  unsigned active = 0;
  std::atomic<unsigned> generation{0};
  std::atomic<unsigned> arrived{0};
  std::atomic<unsigned> pending_site{0};  // the call the waiting lanes are at (for messages)
  unsigned site[2][kSimdWidth] = {};
  unsigned char slot[2][kSimdWidth][kMaxSimdBytes] = {};
};

std::string describe_site(unsigned site) {
  static const char* const names[] = {"?", "simd_shuffle", "simd_shuffle_down", "simd_sum", "simd_product",
                                      "simd_max", "simd_min", "simdgroup_matrix operation"};
  return std::string(names[site % 8]) + " (MSL line " + std::to_string(site / 8) + ")";
}

// The state of one launch, shared by its threads; held by shared_ptr so that threads abandoned
// after a failure (stuck in a loop that no barrier can end) never touch freed memory.
//
// Arrivals are counted with atomics and waiters sleep in std::atomic::wait on the phase's
// generation (a futex on Linux). A mutex and condition variable would wake every waiter into a
// convoy on the mutex at each phase, about three times slower on a 256^3 tiled matmul.
// The timeout lives in the launching thread's watchdog (`supervise`), which is idle anyway.
class Launch {
 public:
  Launch(int threads, double timeout_s)
      : threads_(threads), timeout_s_(timeout_s), simd_(new SimdGroup[(threads + kSimdWidth - 1) / kSimdWidth]) {
    for (int first = 0, index = 0; first < threads; first += kSimdWidth, ++index)
      simd_[index].active = std::min<unsigned>(kSimdWidth, threads - first);
  }

  // One simdgroup function call of lane `lane_index` (linear index in the threadgroup).
  void exchange(int lane_index, Group group, const void* value, unsigned bytes, unsigned site, void* gathered,
                unsigned* lane_out, unsigned* active_out) {
    SimdGroup& simd = simd_[lane_index / kSimdWidth];
    const unsigned lane = lane_index % kSimdWidth;
    *lane_out = lane;
    *active_out = simd.active;
    if (failed()) {
      for (unsigned i = 0; i < kSimdWidth; ++i) std::memcpy(static_cast<char*>(gathered) + i * bytes, value, bytes);
      return;
    }
    const unsigned generation = simd.generation.load(std::memory_order_acquire);
    const unsigned parity = generation & 1;
    std::memcpy(simd.slot[parity][lane], value, bytes);
    simd.site[parity][lane] = site;
    simd.pending_site.store(site, std::memory_order_release);
    if (simd.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == simd.active) {
      for (unsigned i = 1; i < simd.active; ++i) {
        if (simd.site[parity][i] != simd.site[parity][0]) {
          fail("lanes of simdgroup " + std::to_string(lane_index / kSimdWidth) + " of threadgroup " + format(group) +
               " met at different simdgroup functions: lane 0 at " + describe_site(simd.site[parity][0]) +
               ", lane " + std::to_string(i) + " at " + describe_site(simd.site[parity][i]) +
               " (simdgroup functions in divergent control flow are undefined in Metal)");
          break;
        }
      }
      simd.arrived.store(0, std::memory_order_relaxed);
      simd.generation.fetch_add(1, std::memory_order_acq_rel);
      simd.generation.notify_all();
    } else {
      while (simd.generation.load(std::memory_order_acquire) == generation && !failed())
        simd.generation.wait(generation);
    }
    for (unsigned i = 0; i < kSimdWidth; ++i)
      std::memcpy(static_cast<char*>(gathered) + i * bytes, simd.slot[parity][i], bytes);
  }

  void arrive(Arrival arrival, Group group, int lane_index) {
    if (failed_.load(std::memory_order_acquire)) return;
    SimdGroup& simd = simd_[lane_index / kSimdWidth];
    const unsigned waiting = simd.arrived.load(std::memory_order_acquire);
    if (waiting != 0) {
      const unsigned site = simd.pending_site.load(std::memory_order_acquire);
      fail("divergent simdgroup function: lane " + std::to_string(lane_index % kSimdWidth) + " of simdgroup " +
           std::to_string(lane_index / kSimdWidth) + " of threadgroup " + format(group) + " reached " +
           (arrival == Arrival::from_barrier ? "threadgroup_barrier" : "the end of the kernel") + " while " +
           std::to_string(waiting) + " of its " + std::to_string(simd.active) + " lanes wait at " +
           describe_site(site) +
           "; every active lane of a simdgroup must call the same simdgroup functions (Metal leaves a "
           "shuffle or reduction reached by part of a simdgroup undefined)");
      return;
    }
    const unsigned generation = generation_.load(std::memory_order_acquire);
    if (arrival == Arrival::from_barrier) arrived_from_barrier_.fetch_add(1, std::memory_order_relaxed);
    phase_group_.store(pack(group), std::memory_order_relaxed);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      const int from_barrier = arrived_from_barrier_.load(std::memory_order_relaxed);
      arrived_.store(0, std::memory_order_relaxed);
      arrived_from_barrier_.store(0, std::memory_order_relaxed);
      if (from_barrier != 0 && from_barrier != threads_) fail_divergent(group, from_barrier);
      next_phase();
      return;
    }
    while (generation_.load(std::memory_order_acquire) == generation && !failed()) generation_.wait(generation);
  }

  void misaligned(const void* address, unsigned long bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (misaligned_message_.empty())
      misaligned_message_ = "misaligned vector access: a " + std::to_string(bytes) +
                            "-byte vector at address " + hex(address) + " is not aligned to " +
                            std::to_string(bytes == 12 ? 16 : bytes) +
                            " bytes (Metal requires vector pointers aligned to the vector size)";
  }

  void fail(const std::string& message) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failed_.load()) error_ = message;
      failed_.store(true, std::memory_order_release);
      all_finished_.notify_all();
    }
    next_phase();  // releases every waiter; from now on barriers return at once
  }

  bool failed() const { return failed_.load(std::memory_order_acquire); }

  void thread_finished() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++finished_;
    all_finished_.notify_all();
  }

  // Waits until `started` threads have finished, failing the launch as a deadlock when a phase has
  // waiters but makes no progress for the timeout. Returns false when the launch failed and some
  // threads still had not finished a timeout later (they cannot be stopped, only abandoned).
  bool supervise(int started) {
    using clock = std::chrono::steady_clock;
    const auto timeout = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_s_));
    const auto poll = std::min<clock::duration>(timeout / 10, std::chrono::milliseconds(50));
    unsigned watched_generation = generation_.load();
    auto progress_at = clock::now();
    auto failed_at = clock::time_point::max();
    std::unique_lock<std::mutex> lock(mutex_);
    while (finished_ < started) {
      all_finished_.wait_for(lock, poll);
      const auto now = clock::now();
      if (failed()) {
        failed_at = std::min(failed_at, now);
        if (finished_ < started && now - failed_at >= timeout) return false;
        continue;
      }
      const unsigned generation = generation_.load();
      const int waiting = arrived_.load();
      if (generation != watched_generation || waiting == 0) {
        watched_generation = generation;
        progress_at = now;
      } else if (now - progress_at >= timeout) {
        lock.unlock();
        fail(deadlock_message(waiting));
        lock.lock();
      }
    }
    return true;
  }

  std::string error() {
    std::lock_guard<std::mutex> lock(mutex_);
    return failed() ? error_ : misaligned_message_;
  }

 private:
  void next_phase() {
    generation_.fetch_add(1, std::memory_order_acq_rel);
    generation_.notify_all();
    if (failed()) {
      for (int i = 0; i * static_cast<int>(kSimdWidth) < threads_; ++i) {
        simd_[i].generation.fetch_add(1, std::memory_order_acq_rel);
        simd_[i].generation.notify_all();
      }
    }
  }

  void fail_divergent(Group group, int from_barrier) {
    fail("threads of threadgroup " + format(group) + " disagree on the number of threadgroup_barrier calls: " +
         std::to_string(from_barrier) + " of " + std::to_string(threads_) +
         " threads called threadgroup_barrier while the others had returned from the kernel "
         "(a barrier inside thread-dependent control flow? every thread of a threadgroup must "
         "reach the same barriers)");
  }

  std::string deadlock_message(int waiting) const {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", timeout_s_);
    return "deadlock: not all " + std::to_string(threads_) + " threads of threadgroup " +
           format(unpack(phase_group_.load())) + " reached threadgroup_barrier within " + seconds + " s (" +
           std::to_string(waiting) +
           " arrived; a barrier inside thread-dependent control flow, or a thread waiting for another?)";
  }

  static unsigned long long pack(Group group) {
    return (static_cast<unsigned long long>(group.z) << 42) | (static_cast<unsigned long long>(group.y) << 21) |
           group.x;
  }

  static Group unpack(unsigned long long packed) {
    const unsigned long long mask = (1ull << 21) - 1;
    return {static_cast<unsigned>(packed & mask), static_cast<unsigned>(packed >> 21 & mask),
            static_cast<unsigned>(packed >> 42)};
  }

  static std::string format(Group group) {
    return "(" + std::to_string(group.x) + "," + std::to_string(group.y) + "," + std::to_string(group.z) + ")";
  }

  static std::string hex(const void* address) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx",
                  static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(address)));
    return text;
  }

  const int threads_;
  const double timeout_s_;
  std::unique_ptr<SimdGroup[]> simd_;
  std::atomic<unsigned> generation_{0};
  std::atomic<int> arrived_{0};
  std::atomic<int> arrived_from_barrier_{0};
  std::atomic<unsigned long long> phase_group_{0};
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  std::condition_variable all_finished_;
  int finished_ = 0;
  std::string error_;
  std::string misaligned_message_;
};

// What a worker thread is doing now; the kernel's barrier finds it through `current_lane`.
struct Lane {
  Launch* launch;
  Group group;
  int index;  // linear index in the threadgroup
};

thread_local Lane* current_lane = nullptr;

struct Dispatch {
  KernelWrapper kernel;
  void** args;
  Group grid;
  Group block;
};

void run_lane(std::shared_ptr<Launch> launch, Dispatch dispatch, int lane_index) {
  const unsigned tx = lane_index % dispatch.block.x;
  const unsigned ty = lane_index / dispatch.block.x % dispatch.block.y;
  const unsigned tz = lane_index / (dispatch.block.x * dispatch.block.y);
  Lane lane{launch.get(), {0, 0, 0}, lane_index};
  current_lane = &lane;
  for (unsigned bz = 0; bz < dispatch.grid.z; ++bz) {
    for (unsigned by = 0; by < dispatch.grid.y; ++by) {
      for (unsigned bx = 0; bx < dispatch.grid.x; ++bx) {
        lane.group = {bx, by, bz};
        dispatch.kernel(dispatch.args, bx, by, bz, tx, ty, tz);
        launch->arrive(Arrival::from_end_of_kernel, lane.group, lane.index);
        if (launch->failed()) goto done;
      }
    }
  }
done:
  current_lane = nullptr;
  launch->thread_finished();
}

int copy_error(const std::string& message, char* error, int error_len) {
  if (error != nullptr && error_len > 0) std::snprintf(error, error_len, "%s", message.c_str());
  return 1;
}

}  // namespace

extern "C" TIR_SIM_INTERNAL void tir_sim_threadgroup_barrier(void) {
  if (current_lane != nullptr)
    current_lane->launch->arrive(Arrival::from_barrier, current_lane->group, current_lane->index);
}

extern "C" TIR_SIM_INTERNAL void tir_sim_simd_exchange(const void* value, unsigned bytes, unsigned site,
                                                       void* gathered, unsigned* lane, unsigned* active) {
  if (current_lane != nullptr)
    current_lane->launch->exchange(current_lane->index, current_lane->group, value, bytes, site, gathered, lane,
                                   active);
}

extern "C" TIR_SIM_INTERNAL void tir_sim_fail(const char* message) {
  if (current_lane != nullptr) current_lane->launch->fail(message);
}

extern "C" TIR_SIM_INTERNAL void tir_sim_misaligned_vector(const void* address, unsigned long bytes) {
  if (current_lane != nullptr) current_lane->launch->misaligned(address, bytes);
}

// Runs `kernel` over grid (gx, gy, gz) of threadgroups of (tx, ty, tz) threads. Returns 0, or 1 with
// a message in `error` (deadlock, divergent barriers, misaligned vector access, no threads).
// A barrier wait longer than `timeout_s` seconds is a deadlock.
extern "C" TIR_SIM_EXPORT int tir_sim_launch(KernelWrapper kernel, void** args, unsigned gx, unsigned gy,
                                             unsigned gz, unsigned tx, unsigned ty, unsigned tz,
                                             double timeout_s, char* error, int error_len) {
  const long threads = static_cast<long>(tx) * ty * tz;
  if (threads <= 0 || gx == 0 || gy == 0 || gz == 0) return copy_error("empty grid or threadgroup", error, error_len);
  auto launch = std::make_shared<Launch>(static_cast<int>(threads), timeout_s);
  const Dispatch dispatch{kernel, args, {gx, gy, gz}, {tx, ty, tz}};
  std::vector<std::thread> pool;
  pool.reserve(threads);
  try {
    for (int lane = 0; lane < threads; ++lane) pool.emplace_back(run_lane, launch, dispatch, lane);
  } catch (const std::system_error& e) {
    launch->fail("could not start " + std::to_string(threads) + " host threads for one threadgroup (" +
                 e.what() + "); lower the threads per threadgroup or raise the process's thread limit");
  }
  const bool all_finished = launch->supervise(static_cast<int>(pool.size()));
  for (std::thread& thread : pool) {
    if (all_finished)
      thread.join();
    else
      thread.detach();
  }
  std::string message = launch->error();
  if (!all_finished)
    message += " (some threads never finished after the failure and were abandoned; they may keep running)";
  return message.empty() ? 0 : copy_error(message, error, error_len);
}
