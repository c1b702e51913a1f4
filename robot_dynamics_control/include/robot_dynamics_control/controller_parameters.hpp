// What the parameter server refuses for the controllers, beyond generate_parameter_library's
// validators: a non-finite number anywhere (or one of magnitude above 1e12), a per-joint array whose length is neither 1 nor the
// number of joints, a gain that must be positive and is not, and a change of a read-only parameter once the controller is configured (ROS's
// own read_only descriptor is lost where the controller manager declared the parameter first).
#ifndef ROBOT_DYNAMICS_CONTROL__CONTROLLER_PARAMETERS_HPP_
#define ROBOT_DYNAMICS_CONTROL__CONTROLLER_PARAMETERS_HPP_

#include <string>
#include <utility>
#include <vector>

#include "rcl_interfaces/msg/set_parameters_result.hpp"
#include "rclcpp/parameter.hpp"
#include "rclcpp_lifecycle/lifecycle_node.hpp"

namespace robot_dynamics_control
{

class ParameterChecks
{
public:
  ParameterChecks() = default;
  /// `per_joint`: (name, may be empty) of the parameters given as one value or one per joint;
  /// `read_only`: the parameters fixed once the controller is configured; `positive`: the number
  /// arrays whose every value must be > 0 (gains that divide or set a bandwidth); `sized`: (name,
  /// count) of the number arrays of exactly count values or none (a task's gains, one per task row).
  ParameterChecks(
    std::vector<std::pair<std::string, bool>> per_joint, std::vector<std::string> read_only,
    std::vector<std::string> positive = {}, std::vector<std::pair<std::string, size_t>> sized = {});

  /// "" or the reason `parameter` is refused, for a controller of `n` joints (0: not known yet, no
  /// length check) that is `configured` or not.
  std::string check(const rclcpp::Parameter & parameter, size_t n, bool configured) const;
  /// Records the type of every parameter of `node` (after their declaration): a later value of
  /// another type is refused (the generated callback would throw out of set_parameters).
  void record_types(rclcpp_lifecycle::LifecycleNode & node);
  /// The on-set-parameters callback's answer: refused with the first reason.
  rcl_interfaces::msg::SetParametersResult on_set(
    const std::vector<rclcpp::Parameter> & parameters, size_t n, bool configured) const;
  /// Every parameter of `node` checked (at configuration: values from a parameters file); throws
  /// std::runtime_error with the first reason.
  void check_node(rclcpp_lifecycle::LifecycleNode & node, size_t n) const;

private:
  std::vector<std::pair<std::string, bool>> per_joint_;
  std::vector<std::string> read_only_, positive_;
  std::vector<std::pair<std::string, size_t>> sized_;
  std::vector<std::pair<std::string, rclcpp::ParameterType>> types_;
};

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__CONTROLLER_PARAMETERS_HPP_
