// The tests' harness of SimulatedSystem (and of the bench's TimedSimulatedSystem): the PUMA 560
// with a <ros2_control> block for it, one controller-manager cycle at a time, and the allocations
// of read() and write(). It includes allocation_counter.hpp: one translation unit per executable.
#ifndef ROBOT_DYNAMICS_CONTROL__TEST_SIMULATED_SYSTEM_HARNESS_HPP_
#define ROBOT_DYNAMICS_CONTROL__TEST_SIMULATED_SYSTEM_HARNESS_HPP_

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "allocation_counter.hpp"
#include "hardware_interface/component_parser.hpp"
#include "hardware_interface/types/hardware_interface_return_values.hpp"
#include "rclcpp_lifecycle/state.hpp"
#include "robot_dynamics_control/simulated_system.hpp"
#include "test_files.hpp"

namespace robot_dynamics_control::test
{
using hardware_interface::return_type;
using CallbackReturn = SimulatedSystem::CallbackReturn;

inline const std::vector<std::string> kJoints = {"joint1", "joint2", "joint3", "joint4", "joint5", "joint6"};
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline std::string param(const std::string & name, const std::string & value);

// The PUMA 560 with a <ros2_control> block for SimulatedSystem (as robot_dynamics' ros2_control.py
// writes it): `params` inside <hardware>, `q0` as the position states' initial values. The model
// text (the robot_model parameter) is made as a launch makes it: a `drivetrain` param of `params`
// becomes the text of the URDF with that YAML, made strict (empty where the loader fails); without,
// the bare URDF's text, unchecked.
inline std::string puma_with_block(const std::string & params, const std::vector<double> & q0, const std::string & joint_extra = "")
{
  std::string urdf = read_text(robot_file("urdf/puma560.urdf"));
  std::ostringstream b;
  b.precision(17);
  // the bare URDF carries the published link 3 inertia, which breaks the triangle inequality: the
  // drive-train YAML accepts that issue, a block without it has to allow it
  std::string hardware = params, allow;
  const std::string open = "<param name=\"drivetrain\">";
  const auto at = hardware.find(open);
  std::string model;
  if (at != std::string::npos) {
    const auto end = hardware.find("</param>", at);
    const std::string drivetrain = hardware.substr(at + open.size(), end - at - open.size());
    hardware.erase(at, end + std::string("</param>").size() - at);
    model = engine_model_text(urdf, drivetrain, "--strict --allow-no-effort-limit");
  } else {
    model = engine_model_text(urdf, "", "");
    allow = param("allow_nonphysical_model", "true");
  }
  b << "<ros2_control name=\"puma560\" type=\"system\"><hardware><plugin>robot_dynamics_control/SimulatedSystem"
    << "</plugin>" << param("robot_model", model) << hardware << allow << "</hardware>";
  for (std::size_t i = 0; i < kJoints.size(); ++i) {
    b << "<joint name=\"" << kJoints[i] << "\"><command_interface name=\"effort\"/>"
      << "<state_interface name=\"position\"><param name=\"initial_value\">" << q0[i] << "</param></state_interface>"
      << "<state_interface name=\"velocity\"/><state_interface name=\"effort\"/></joint>";
  }
  b << joint_extra << "</ros2_control>";
  const auto end = urdf.rfind("</robot>");
  return urdf.substr(0, end) + b.str() + "\n</robot>\n";
}

inline std::string param(const std::string & name, const std::string & value)
{
  return "<param name=\"" + name + "\">" + value + "</param>";
}

inline hardware_interface::HardwareInfo info_of(const std::string & urdf)
{
  return hardware_interface::parse_control_resources_from_urdf(urdf).at(0);
}

struct Sim
{
  std::unique_ptr<SimulatedSystem> hw;
  std::vector<hardware_interface::StateInterface> states;
  std::vector<hardware_interface::CommandInterface> commands;
  std::vector<double> command = std::vector<double>(6, kNaN);
  std::int64_t t_ns = 0;

  // `system`: the hardware under test (default a SimulatedSystem), initialised from `urdf`'s block
  explicit Sim(const std::string & urdf, std::unique_ptr<SimulatedSystem> system = std::make_unique<SimulatedSystem>())
  : hw(std::move(system))
  {
    if (hw->on_init(info_of(urdf)) != CallbackReturn::SUCCESS) {
      throw std::runtime_error("on_init failed");
    }
    states = hw->export_state_interfaces();
    commands = hw->export_command_interfaces();
    hw->on_activate(rclcpp_lifecycle::State());
  }
  // one controller-manager cycle of `dt`: read (the plant advances), then the command written
  return_type cycle(double dt = 0.002)
  {
    t_ns += static_cast<std::int64_t>(std::llround(dt * 1e9));
    const rclcpp::Time time(t_ns);
    const rclcpp::Duration period(std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(dt * 1e9))));
    const return_type r = hw->read(time, period);
    for (std::size_t i = 0; i < commands.size(); ++i) {
      commands[i].set_value(command[i]);
    }
    const return_type w = hw->write(time, period);
    return r == return_type::OK ? w : r;
  }
};

// Allocations on this thread during `cycles` read() and write() pairs of `sim`, at one time and a
// 2 ms period.
inline long allocations_in_cycles(Sim & sim, int cycles)
{
  const rclcpp::Time time(1000000);
  const rclcpp::Duration period(std::chrono::nanoseconds(2000000));
  allocations = 0;
  counting = true;
  for (int k = 0; k < cycles; ++k) {
    sim.hw->read(time, period);
    sim.hw->write(time, period);
  }
  counting = false;
  return allocations;
}

}  // namespace robot_dynamics_control::test

#endif  // ROBOT_DYNAMICS_CONTROL__TEST_SIMULATED_SYSTEM_HARNESS_HPP_
