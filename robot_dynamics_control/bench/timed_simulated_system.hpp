// SimulatedSystem with the controller manager's cycles timed, for the control-loop bench
// (bench/bench_control_loop.py of the repository): the delay from a read (the state a controller
// sees) to the command written for it. Built only in a bench build (-DRD_BENCH_HARDWARE=ON), into
// the package's library: the product's SimulatedSystem measures nothing.
//
// Plugin robot_dynamics_control/TimedSimulatedSystem. Hardware parameters: SimulatedSystem's, and
//   timing_log          CSV file of the per-cycle timing (empty or absent: off), see CycleLog
//   timing_log_cycles   cycles the timing log keeps, the last ones (default 2^20)
// The log is written when the hardware is deactivated and when it is destroyed.
#ifndef ROBOT_DYNAMICS_CONTROL__BENCH__TIMED_SIMULATED_SYSTEM_HPP_
#define ROBOT_DYNAMICS_CONTROL__BENCH__TIMED_SIMULATED_SYSTEM_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "robot_dynamics_control/simulated_system.hpp"

namespace robot_dynamics_control::bench
{

// A preallocated ring buffer of the controller manager's cycles. Per cycle: the steady clock when
// read() exposed the new state and when write() took the command [ns], the ROS time given to
// read() [ns] and the commanded effort of every joint [N m or N] (the raw command, NaN included).
// The last `capacity` cycles are kept; write_csv() writes them oldest first.
class CycleLog
{
public:
  // Allocates (and touches) the buffer: configuration time only.
  void reset(std::size_t capacity, std::size_t joints);
  bool enabled() const { return capacity_ > 0; }
  // A new cycle: its read time and the ROS time of the read. No allocation.
  void on_read(std::int64_t steady_ns, std::int64_t ros_ns);
  // The current cycle's write time and commands (`joints` values). No allocation.
  void on_write(std::int64_t steady_ns, const double * effort);
  std::size_t size() const { return count_ < capacity_ ? count_ : capacity_; }
  std::uint64_t cycles() const { return count_; }
  // The kept cycles as CSV (header: cycle,read_steady_ns,write_steady_ns,ros_time_ns,
  // effort_<joint>...), written to a temporary file beside `path` and renamed over it. A cycle
  // without a write has write_steady_ns -1. False with the reason in *error.
  bool write_csv(
    const std::string & path, const std::vector<std::string> & joint_names, std::string * error) const;

private:
  std::size_t capacity_ = 0, joints_ = 0;
  std::uint64_t count_ = 0;  // cycles begun; the current one is count_ - 1
  std::vector<std::int64_t> times_;  // 3 per cycle: read, write, ros
  std::vector<double> effort_;       // joints_ per cycle
};

class TimedSimulatedSystem : public SimulatedSystem
{
public:
  TimedSimulatedSystem() = default;
  ~TimedSimulatedSystem() override;

  CallbackReturn on_init(const hardware_interface::HardwareInfo & info) override;
  CallbackReturn on_deactivate(const rclcpp_lifecycle::State & previous_state) override;
  hardware_interface::return_type read(const rclcpp::Time & time, const rclcpp::Duration & period) override;
  hardware_interface::return_type write(const rclcpp::Time & time, const rclcpp::Duration & period) override;

  const CycleLog & cycle_log() const { return log_; }

private:
  void save_timing_log();

  std::string timing_log_;
  CycleLog log_;
  std::uint64_t saved_cycles_ = 0;
};

}  // namespace robot_dynamics_control::bench

#endif  // ROBOT_DYNAMICS_CONTROL__BENCH__TIMED_SIMULATED_SYSTEM_HPP_
