// SimulatedSystem with its cycles timed (see timed_simulated_system.hpp).

#include "timed_simulated_system.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "rclcpp/logging.hpp"

namespace robot_dynamics_control::bench
{
namespace
{
rclcpp::Logger logger() { return rclcpp::get_logger("robot_dynamics_control.TimedSimulatedSystem"); }

std::int64_t steady_ns()
{
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

// The hardware parameter `name` taken out of `params` (trimmed), `fallback` when absent.
std::string take(std::unordered_map<std::string, std::string> & params, const std::string & name,
                 const std::string & fallback)
{
  const auto it = params.find(name);
  if (it == params.end()) {
    return fallback;
  }
  std::string value = it->second;
  params.erase(it);
  const auto a = value.find_first_not_of(" \t\r\n");
  return a == std::string::npos ? "" : value.substr(a, value.find_last_not_of(" \t\r\n") - a + 1);
}

// timing_log_cycles: an integer in [1, 1e8]; std::runtime_error otherwise.
std::size_t parse_cycles(const std::string & text)
{
  char * end = nullptr;
  const double cycles = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(cycles >= 1 && cycles <= 1e8) ||
      cycles != std::floor(cycles)) {
    throw std::runtime_error("timing_log_cycles: expected an integer in [1, 1e8], got '" + text + "'");
  }
  return static_cast<std::size_t>(cycles);
}
}  // namespace

// -- the timing log ------------------------------------------------------------------------------

void CycleLog::reset(std::size_t capacity, std::size_t joints)
{
  capacity_ = capacity;
  joints_ = joints;
  count_ = 0;
  // value-initialised: every page touched now, none faulted in inside the loop
  times_.assign(3 * capacity, -1);
  effort_.assign(joints * capacity, std::numeric_limits<double>::quiet_NaN());
}

void CycleLog::on_read(std::int64_t steady, std::int64_t ros)
{
  if (capacity_ == 0) {
    return;
  }
  const std::size_t k = count_ % capacity_;
  times_[3 * k] = steady;
  times_[3 * k + 1] = -1;
  times_[3 * k + 2] = ros;
  std::fill_n(effort_.begin() + static_cast<std::ptrdiff_t>(joints_ * k), joints_,
              std::numeric_limits<double>::quiet_NaN());
  ++count_;
}

void CycleLog::on_write(std::int64_t steady, const double * effort)
{
  if (capacity_ == 0 || count_ == 0) {
    return;  // a write before any read belongs to no cycle
  }
  const std::size_t k = (count_ - 1) % capacity_;
  times_[3 * k + 1] = steady;
  std::copy(effort, effort + joints_, effort_.begin() + static_cast<std::ptrdiff_t>(joints_ * k));
}

bool CycleLog::write_csv(
  const std::string & path, const std::vector<std::string> & joint_names, std::string * error) const
{
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE * f = std::fopen(tmp.c_str(), "w");
  if (!f) {
    *error = "cannot write '" + tmp + "'";
    return false;
  }
  std::fputs("cycle,read_steady_ns,write_steady_ns,ros_time_ns", f);
  for (const auto & j : joint_names) {
    std::fprintf(f, ",effort_%s", j.c_str());
  }
  std::fputc('\n', f);
  const std::uint64_t n = size(), first = count_ - n;
  for (std::uint64_t c = first; c < count_; ++c) {
    const std::size_t k = c % capacity_;
    std::fprintf(f, "%llu,%lld,%lld,%lld", static_cast<unsigned long long>(c),
                 static_cast<long long>(times_[3 * k]), static_cast<long long>(times_[3 * k + 1]),
                 static_cast<long long>(times_[3 * k + 2]));
    for (std::size_t j = 0; j < joints_; ++j) {
      std::fprintf(f, ",%.17g", effort_[joints_ * k + j]);
    }
    std::fputc('\n', f);
  }
  const bool ok = std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    *error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

// -- the hardware --------------------------------------------------------------------------------

TimedSimulatedSystem::~TimedSimulatedSystem() { save_timing_log(); }

TimedSimulatedSystem::CallbackReturn TimedSimulatedSystem::on_init(const hardware_interface::HardwareInfo & info)
{
  hardware_interface::HardwareInfo plant = info;  // SimulatedSystem's parameters alone
  std::string cycles;
  timing_log_ = take(plant.hardware_parameters, "timing_log", "");
  cycles = take(plant.hardware_parameters, "timing_log_cycles", "1048576");
  if (SimulatedSystem::on_init(plant) != CallbackReturn::SUCCESS) {
    return CallbackReturn::ERROR;
  }
  try {
    const std::size_t capacity = parse_cycles(cycles);
    if (!timing_log_.empty()) {
      // fail now, not at the end of a run, where the file cannot be written
      const std::string probe = timing_log_ + ".tmp." + std::to_string(::getpid());
      std::FILE * f = std::fopen(probe.c_str(), "w");
      if (!f) {
        throw std::runtime_error("timing_log: cannot write beside '" + timing_log_ + "'");
      }
      std::fclose(f);
      std::remove(probe.c_str());
      log_.reset(capacity, joint_names().size());
      RCLCPP_INFO(logger(), "'%s': timing log %s", info.name.c_str(), timing_log_.c_str());
    }
  } catch (const std::exception & e) {
    RCLCPP_FATAL(logger(), "'%s': %s", info.name.c_str(), e.what());
    return CallbackReturn::ERROR;
  }
  return CallbackReturn::SUCCESS;
}

TimedSimulatedSystem::CallbackReturn TimedSimulatedSystem::on_deactivate(const rclcpp_lifecycle::State & previous_state)
{
  const CallbackReturn r = SimulatedSystem::on_deactivate(previous_state);
  save_timing_log();
  return r;
}

hardware_interface::return_type TimedSimulatedSystem::read(const rclcpp::Time & time, const rclcpp::Duration & period)
{
  const hardware_interface::return_type r = SimulatedSystem::read(time, period);
  if (r == hardware_interface::return_type::OK) {
    log_.on_read(steady_ns(), time.nanoseconds());
  }
  return r;
}

hardware_interface::return_type TimedSimulatedSystem::write(const rclcpp::Time & time, const rclcpp::Duration & period)
{
  log_.on_write(steady_ns(), commands().data());
  return SimulatedSystem::write(time, period);
}

void TimedSimulatedSystem::save_timing_log()
{
  if (timing_log_.empty() || !log_.enabled() || log_.cycles() == saved_cycles_) {
    return;
  }
  std::string error;
  if (log_.write_csv(timing_log_, joint_names(), &error)) {
    saved_cycles_ = log_.cycles();
    RCLCPP_INFO(logger(), "timing of %zu cycles written to %s", log_.size(), timing_log_.c_str());
  } else {
    RCLCPP_ERROR(logger(), "timing log: %s", error.c_str());
  }
}

}  // namespace robot_dynamics_control::bench

#include "pluginlib/class_list_macros.hpp"

PLUGINLIB_EXPORT_CLASS(robot_dynamics_control::bench::TimedSimulatedSystem, hardware_interface::SystemInterface)
