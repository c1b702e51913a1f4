// Allocations counted on the calling thread: this header defines the test executable's malloc,
// calloc, realloc, free and aligned allocators (operator new and delete go through them) over glibc's
// entry points, each adding to `allocations` while `counting` is set on its thread.
//
// Include it in exactly one translation unit of a test executable: it defines those functions (not
// inline, so that they replace glibc's for the whole process), and a second copy in the same
// executable fails to link with duplicate symbols rather than counting twice.
#ifndef ROBOT_DYNAMICS_CONTROL__TEST_ALLOCATION_COUNTER_HPP_
#define ROBOT_DYNAMICS_CONTROL__TEST_ALLOCATION_COUNTER_HPP_

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>

extern "C" {
void * __libc_malloc(size_t);
void * __libc_calloc(size_t, size_t);
void * __libc_realloc(void *, size_t);
void __libc_free(void *);
void * __libc_memalign(size_t, size_t);
}

namespace robot_dynamics_control::test
{

/// Whether allocations on this thread are counted now.
thread_local bool counting = false;
/// Allocation and free calls (a free of nullptr excluded) on this thread while `counting`.
thread_local long allocations = 0;

/// Allocations and frees made by `f` on this thread.
template<typename F>
long count_allocations(F && f)
{
  allocations = 0;
  counting = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);  // neither store moves across f()
  f();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  counting = false;
  return allocations;
}

}  // namespace robot_dynamics_control::test

extern "C" {
void * malloc(size_t size)
{
  robot_dynamics_control::test::allocations += robot_dynamics_control::test::counting;
  return __libc_malloc(size);
}
void * calloc(size_t n, size_t size)
{
  robot_dynamics_control::test::allocations += robot_dynamics_control::test::counting;
  return __libc_calloc(n, size);
}
void * realloc(void * p, size_t size)
{
  robot_dynamics_control::test::allocations += robot_dynamics_control::test::counting;
  return __libc_realloc(p, size);
}
void free(void * p)
{
  robot_dynamics_control::test::allocations += robot_dynamics_control::test::counting && p != nullptr;
  __libc_free(p);
}
void * memalign(size_t alignment, size_t size)
{
  robot_dynamics_control::test::allocations += robot_dynamics_control::test::counting;
  return __libc_memalign(alignment, size);
}
void * aligned_alloc(size_t alignment, size_t size)
{
  robot_dynamics_control::test::allocations += robot_dynamics_control::test::counting;
  return __libc_memalign(alignment, size);
}
int posix_memalign(void ** out, size_t alignment, size_t size)
{
  robot_dynamics_control::test::allocations += robot_dynamics_control::test::counting;
  if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) {
    return EINVAL;  // as glibc's: a power of two multiple of sizeof(void *)
  }
  void * p = __libc_memalign(alignment, size);
  if (p == nullptr) {
    return ENOMEM;
  }
  *out = p;
  return 0;
}
}

#endif  // ROBOT_DYNAMICS_CONTROL__TEST_ALLOCATION_COUNTER_HPP_
