// A controller of this package on plain doubles, without a controller manager: configured from a
// parameters file, its interfaces bound to doubles the test writes (states) and reads (efforts),
// activated, and updated by hand; as ros2_controllers' tests drive their controllers.
#ifndef ROBOT_DYNAMICS_CONTROL__TEST_CONTROLLER_HARNESS_HPP_
#define ROBOT_DYNAMICS_CONTROL__TEST_CONTROLLER_HARNESS_HPP_

#include <cstdio>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "controller_interface/chainable_controller_interface.hpp"
#include "controller_interface/controller_interface.hpp"
#include "controller_interface/version.h"
#include "hardware_interface/handle.hpp"
#include "hardware_interface/loaned_command_interface.hpp"
#include "hardware_interface/loaned_state_interface.hpp"
#include "lifecycle_msgs/msg/state.hpp"
#include "rclcpp/rclcpp.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // Jazzy: handles on the caller's doubles

namespace robot_dynamics_control::test
{

/// Owns a controller and the doubles behind its interfaces.
template<typename Controller>
class Harness
{
public:
  /// `params_file`: a ROS parameters YAML for the controller (key `/**`); `urdf`: the controller
  /// manager's robot description (ros2_control 4 and later; ignored on 2); `chained`: put the
  /// controller in chained mode before activation (chainable controllers).
  Harness(const std::string & name, const std::string & params_file, const std::string & urdf, bool chained = false)
  : controller(std::make_shared<Controller>())
  {
    rclcpp::NodeOptions options;
    options.allow_undeclared_parameters(true).automatically_declare_parameters_from_overrides(true);
    options.arguments({"--ros-args", "--params-file", params_file});
#if CONTROLLER_INTERFACE_VERSION_MAJOR >= 4
    const auto rc = controller->init(name, urdf, 100, "", options);
#else
    (void)urdf;
    const auto rc = controller->init(name, "", options);
#endif
    if (rc != controller_interface::return_type::OK) {
      throw std::runtime_error("init failed");
    }
    if (controller->configure().id() != lifecycle_msgs::msg::State::PRIMARY_STATE_INACTIVE) {
      throw std::runtime_error("configure failed");
    }
    const auto commands = controller->command_interface_configuration().names;
    const auto states = controller->state_interface_configuration().names;
    command_values.assign(commands.size(), 0.0);
    state_values.assign(states.size(), 0.0);
    std::vector<hardware_interface::LoanedCommandInterface> loaned_commands;
    std::vector<hardware_interface::LoanedStateInterface> loaned_states;
    for (size_t k = 0; k < commands.size(); ++k) {
      const auto slash = commands[k].rfind('/');
#if CONTROLLER_INTERFACE_VERSION_MAJOR >= 4
      auto handle = std::make_shared<hardware_interface::CommandInterface>(
        commands[k].substr(0, slash), commands[k].substr(slash + 1), &command_values[k]);
      command_handles.push_back(handle);
      loaned_commands.emplace_back(handle, nullptr);
#else
      command_handles.emplace_back(commands[k].substr(0, slash), commands[k].substr(slash + 1), &command_values[k]);
      loaned_commands.emplace_back(command_handles.back());
#endif
    }
    for (size_t k = 0; k < states.size(); ++k) {
      const auto slash = states[k].rfind('/');
#if CONTROLLER_INTERFACE_VERSION_MAJOR >= 4
      auto handle = std::make_shared<hardware_interface::StateInterface>(
        states[k].substr(0, slash), states[k].substr(slash + 1), &state_values[k]);
      state_handles.push_back(handle);
      loaned_states.emplace_back(handle, nullptr);
#else
      state_handles.emplace_back(states[k].substr(0, slash), states[k].substr(slash + 1), &state_values[k]);
      loaned_states.emplace_back(state_handles.back());
#endif
    }
    state_names = states;
    if constexpr (std::is_base_of_v<controller_interface::ChainableControllerInterface, Controller>) {
      for (auto & r : controller->export_reference_interfaces()) {
#if CONTROLLER_INTERFACE_VERSION_MAJOR >= 4
        references.push_back(r);
#else
        references.push_back(std::make_shared<hardware_interface::CommandInterface>(std::move(r)));
#endif
      }
      if (chained && !controller->set_chained_mode(true)) {
        throw std::runtime_error("set_chained_mode failed");
      }
    }
    controller->assign_interfaces(std::move(loaned_commands), std::move(loaned_states));
  }

  ~Harness()
  {
    controller->release_interfaces();
  }

  void activate()
  {
    if (controller->get_node()->activate().id() != lifecycle_msgs::msg::State::PRIMARY_STATE_ACTIVE) {
      throw std::runtime_error("activate failed");
    }
  }

  void deactivate()
  {
    if (controller->get_node()->deactivate().id() != lifecycle_msgs::msg::State::PRIMARY_STATE_INACTIVE) {
      throw std::runtime_error("deactivate failed");
    }
  }

  /// q and qd in the order of the state interfaces: the commanded joints', then the model's others.
  void set_state(const std::vector<double> & q, const std::vector<double> & qd)
  {
    for (size_t i = 0; i < q.size(); ++i) {
      state_values[2 * i] = q[i];
      state_values[2 * i + 1] = qd[i];
    }
  }

  controller_interface::return_type update(double t)
  {
    return controller->update(rclcpp::Time(static_cast<int64_t>(t * 1e9), RCL_ROS_TIME), rclcpp::Duration(0, 1000000));
  }

  std::shared_ptr<Controller> controller;
  std::vector<double> command_values, state_values;
  std::vector<std::string> state_names;
  std::vector<std::shared_ptr<hardware_interface::CommandInterface>> references;

private:
#if CONTROLLER_INTERFACE_VERSION_MAJOR >= 4
  std::vector<std::shared_ptr<hardware_interface::CommandInterface>> command_handles;
  std::vector<std::shared_ptr<hardware_interface::StateInterface>> state_handles;
#else
  std::deque<hardware_interface::CommandInterface> command_handles;  // stable addresses
  std::deque<hardware_interface::StateInterface> state_handles;
#endif
};

}  // namespace robot_dynamics_control::test

#pragma GCC diagnostic pop

#endif  // ROBOT_DYNAMICS_CONTROL__TEST_CONTROLLER_HARNESS_HPP_
