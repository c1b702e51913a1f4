// What the joint-space controllers share: the model, the joints matched by name, the state and
// command handles found by name, saturation and the safe output of a tick that cannot be computed.
#ifndef ROBOT_DYNAMICS_CONTROL__CONTROLLER_CORE_HPP_
#define ROBOT_DYNAMICS_CONTROL__CONTROLLER_CORE_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "controller_interface/controller_interface_base.hpp"
#include "hardware_interface/loaned_command_interface.hpp"
#include "hardware_interface/loaned_state_interface.hpp"
#include "robot_dynamics_control/engine_model.hpp"

namespace robot_dynamics_control
{

/// The outcome of the last tick (Python's robot_dynamics.control.Status flags).
enum TickStatus : int { TICK_OK = 0, TICK_SATURATED = 1, TICK_FAULT = 4 };

class JointSpaceCore
{
public:
  /// Loads the model (EngineModel::from_description), matches `joints` to its joints by name and
  /// sizes every buffer. Every joint of the model must be named once. `effort_limits`: one per
  /// entry of `joints` (> 0), or empty for the model's. Throws std::runtime_error with the reason.
  void configure(
    const std::string & urdf, const std::string & drivetrain, const std::vector<std::string> & joints,
    const std::vector<double> & effort_limits);

  /// <joint>/effort for each joint, in `joints` order.
  std::vector<std::string> command_interface_names() const;
  /// <joint>/position and <joint>/velocity for each joint, in `joints` order.
  std::vector<std::string> state_interface_names() const;

  /// Finds the handles by name among the loaned ones (on_activate). Throws std::runtime_error
  /// naming a missing interface.
  void bind(
    const std::vector<hardware_interface::LoanedCommandInterface> & commands,
    const std::vector<hardware_interface::LoanedStateInterface> & states);

  // -- real-time: no allocation, no lock, no exception ---------------------------------------------
  /// Reads q and qd (model order); false when a value is not finite.
  bool read(const std::vector<hardware_interface::LoanedStateInterface> & states) noexcept;
  /// Accepts tau (model order) computed with status `rd_status`: when RD_OK and finite, the state
  /// becomes the last valid one; else tau becomes the safe output (fault()). Then saturates and
  /// writes the efforts.
  void finish(int rd_status, std::vector<hardware_interface::LoanedCommandInterface> & commands) noexcept;
  /// The safe output into tau: the gravity torque of the last valid position (zero before one, or
  /// when it cannot be computed), as robot_dynamics.control.base.ControllerBase._fault.
  void fault() noexcept;

  int n() const { return n_; }
  const std::vector<std::string> & joints() const { return joints_; }
  /// Model index of each entry of `joints`.
  const std::vector<int> & index() const { return index_; }
  EngineModel & engine() { return *model_; }
  const rd_model & model() const { return model_->model(); }
  rd_work & work() { return model_->work(); }
  int status() const { return status_; }
  int64_t clipped() const { return clipped_; }

  /// Buffers in model order, (nq) each: measured q, qd; the torque being computed; the limits.
  std::vector<double> q, qd, tau, limit;
  /// A joint-indexed vector per entry of `joints` mapped to model order (gains: one value or n).
  bool to_model_order(const std::vector<double> & values, std::vector<double> & out) const noexcept;

private:
  std::shared_ptr<EngineModel> model_;
  std::vector<std::string> joints_;
  std::vector<int> index_;
  std::vector<size_t> command_at_, position_at_, velocity_at_;
  std::vector<double> last_valid_q_, zero_;
  bool has_valid_ = false;
  int n_ = 0;
  int status_ = TICK_OK;
  int64_t clipped_ = 0;
};

/// The robot description to load: the parameter, else (ros2_control 4 and later) the controller
/// manager's. Throws std::runtime_error when both are empty.
std::string robot_description_of(
  const controller_interface::ControllerInterfaceBase & controller, const std::string & parameter);

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__CONTROLLER_CORE_HPP_
