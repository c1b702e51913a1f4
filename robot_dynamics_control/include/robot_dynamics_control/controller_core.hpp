// What the joint-space controllers share: the model, the joints matched by name, the state and
// command handles found by name, saturation, the limits, the faults and the stop behaviour.
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

/// The outcome of the last tick, flags that combine (robot_dynamics.control.Status's SATURATED and
/// FAULT, and two of the loop's own): an effort clipped to its limit; the tick's output is the stop
/// behaviour's (a fault); a reference clamped to a joint's limits; the stop behaviour applied.
enum TickStatus : int { TICK_OK = 0, TICK_SATURATED = 1, TICK_FAULT = 4, TICK_LIMITED = 8, TICK_HOLDING = 16 };

/// What a controller commands when it cannot or must not apply its law: on deactivation, on a fault
/// and before the first valid state.
enum class StopBehaviour {
  /// The gravity torque of the current pose minus hold_damping times the joint velocity (on
  /// deactivation, when nothing updates the command any more: the gravity torque of that pose).
  hold,
  /// Zero effort (the arm falls where the hardware has no brakes).
  zero,
  /// NaN efforts: the brake request of hardware that takes it (SimulatedSystem holds the joints).
  brake,
};

/// "hold", "zero" or "brake"; throws std::runtime_error naming the valid ones.
StopBehaviour stop_behaviour_of(const std::string & name);

/// Why the controller is faulted (the state topic's fault_reason, logged once outside update()).
enum class Fault : int {
  none = 0,
  /// A measured position or velocity is not finite (clears when the state is finite again).
  state = 1,
  /// The law gave a non-finite effort or failed (this tick only).
  law = 2,
  /// |q_r - q| above max_tracking_error: latched until the controller is activated again.
  tracking = 3,
  /// A reference the law needs is NaN (nothing in front of a chained controller writes it; this
  /// tick only).
  reference = 4,
};

/// The model and the safety settings of a controller, fixed at configuration.
struct CoreConfig
{
  /// The engine's model text (`robot-dynamics engine-model ... --strict`), the robot_model parameter.
  std::string robot_model;
  /// The commanded joints (any subset of the model's, any order).
  std::vector<std::string> joints;
  /// The names of the effort command interfaces, <command_joints[i]>/effort, one per entry of
  /// joints, or empty: the joints' own. E.g. "<controller>/<joint>": the reference interfaces of a
  /// chainable controller behind this one (CollisionMonitorController).
  std::vector<std::string> command_joints;
  /// One per entry of joints, or empty: the description's.
  std::vector<double> effort_limits;
  /// Accept a model text made without the loader's strict checks.
  bool allow_nonphysical_model = false;
  /// The hardware adds g(q) itself: the laws and the hold leave it out.
  bool gravity_compensated_by_hardware = false;
  StopBehaviour stop = StopBehaviour::hold;
};

class JointSpaceCore
{
public:
  /// Loads the model (EngineModel::from_parameter: the text made with the loader's strict checks
  /// unless allow_nonphysical_model), matches the joints to its joints by name and sizes every buffer.
  /// Throws std::runtime_error with the reason (a joint named twice or unknown, a model refused,
  /// a joint without an effort limit when none is given).
  void configure(const CoreConfig & config);

  /// <joint>/effort (or <command_joint>/effort) for each commanded joint, in `joints` order.
  std::vector<std::string> command_interface_names() const;
  /// <joint>/position and <joint>/velocity for each commanded joint in `joints` order, then for
  /// each other joint of the model (read, never commanded) in model order.
  std::vector<std::string> state_interface_names() const;

  /// Finds the handles by name among the loaned ones (on_activate). Throws std::runtime_error
  /// naming a missing interface.
  void bind(
    const std::vector<hardware_interface::LoanedCommandInterface> & commands,
    const std::vector<hardware_interface::LoanedStateInterface> & states);

  // -- real-time: no allocation, no lock, no exception ---------------------------------------------
  /// At activation: forgets the last valid state and any latched fault.
  void reset() noexcept;
  /// Reads q and qd (model order); false when a value is not finite (a state fault for finish()).
  bool read(const std::vector<hardware_interface::LoanedStateInterface> & states) noexcept;
  /// Per-joint gains of the safety, model order (nq each): hold damping [N m s/rad or N s/m] and
  /// the largest tracking error [rad or m] (0: none).
  std::vector<double> hold_damping, max_tracking_error;
  /// The update period [s] of the last tick that had one (0: none yet). The hold damps joint j by
  /// at most A_jj / (2 period) (A: the law's model's mass matrix at the pose): a damping computed
  /// from one read and held for a period then halves the joint's speed at most, where more would
  /// reverse it, and beyond 2 A_jj / period make it grow (the iiwa14's flange: A_77 = 0.001 kg m^2).
  double period = 0.0;
  /// The Coulomb sign of friction feed-forwards smoothed to tanh(v / smoothing) [rad/s or m/s].
  double friction_smoothing = 0.0;
  /// Accepts tau (model order) computed with status `rd_status` against the reference position
  /// `q_ref` (model order, or nullptr: no tracking check): when RD_OK, finite and within the
  /// tracking error, the state becomes the last valid one; else a fault and tau becomes the stop
  /// behaviour's output. Then saturates and writes the commanded joints' efforts.
  void finish(
    int rd_status, const double * q_ref, std::vector<hardware_interface::LoanedCommandInterface> & commands) noexcept;
  /// Writes the stop behaviour's output (on deactivation, and while no valid state has been read):
  /// `damped` adds -hold_damping qd of the current state when it is finite.
  void stop(std::vector<hardware_interface::LoanedCommandInterface> & commands, bool damped) noexcept;
  /// tau = the hold: the gravity torque of the current pose (of the law's model: none where the
  /// hardware compensates gravity) minus hold_damping times qd (q, qd finite, the last read), each
  /// joint's damping capped by `period`; false (tau zero) where the engine fails. Whatever the stop
  /// behaviour: a controller's own hold.
  bool hold_output() noexcept;
  /// The law found no reference for model joint k this tick (a NaN): finish() then names a
  /// reference fault of that joint rather than a law's.
  void mark_missing_reference(int k) noexcept
  {
    if (missing_reference_ < 0) {
      missing_reference_ = k;
    }
  }
  /// A reference was clamped to the joint limits this tick (the TICK_LIMITED flag).
  void mark_limited(int k) noexcept
  {
    if (!limited_) {
      limited_joint_ = k;
    }
    limited_ = true;
  }
  /// Model index of the first joint whose reference was clamped in the last tick (-1: none).
  int limited_joint() const { return (status_ & TICK_LIMITED) ? limited_joint_ : -1; }
  /// The clamped position and velocity of model joint k.
  double clamp_position(int k, double x) const noexcept;
  double clamp_velocity(int k, double v) const noexcept;

  /// The number of commanded joints.
  int n() const { return static_cast<int>(joints_.size()); }
  /// The number of the model's joints.
  int nq() const { return nq_; }
  const std::vector<std::string> & joints() const { return joints_; }
  /// Model index of each entry of `joints`.
  const std::vector<int> & index() const { return index_; }
  /// Model indices of the joints read but not commanded, in model order.
  const std::vector<int> & others() const { return others_; }
  EngineModel & engine() { return *model_; }
  const EngineModel & engine() const { return *model_; }
  /// The model the laws use: the loaded one, with zero gravity when the hardware compensates it.
  const rd_model & model() const { return law_model_; }
  rd_work & work() { return model_->work(); }
  int status() const { return status_; }
  int64_t clipped() const { return clipped_; }
  Fault fault_kind() const { return fault_; }
  /// Model index of the joint the fault names (-1: none).
  int fault_joint() const { return fault_joint_; }
  /// The fault's value and the limit it broke (a tracking error and max_tracking_error).
  double fault_value() const { return fault_value_; }
  double fault_limit() const { return fault_limit_; }
  /// Counts the faults begun (a new fault, or another reason): the logger's cue.
  uint64_t fault_count() const { return fault_count_; }
  /// Whether a valid state has been read since activation.
  bool has_valid_state() const { return has_valid_; }
  StopBehaviour stop_behaviour() const { return stop_; }

  /// The deceleration each joint reaches surely [rad/s^2 or m/s^2], model order (nq): half its effort
  /// limit over the largest diagonal entry of the mass matrix found on poses spread over the joints'
  /// limits (+inf without an effort limit). Braking distances of the reference clamps.
  std::vector<double> braking_acceleration;
  /// Buffers in model order, (nq) each: measured q, qd; the torque being computed; the effort
  /// limits (+inf: none), position limits (-inf, +inf: none) and velocity limits (+inf: none).
  std::vector<double> q, qd, tau, limit, lower, upper, velocity_limit;
  /// A joint-indexed vector per entry of `joints` mapped to model order (one value: every joint);
  /// false when its size is neither 1 nor n.
  bool to_model_order(const std::vector<double> & values, std::vector<double> & out) const noexcept;


private:
  /// tau = the stop behaviour's output; `damped`: with -hold_damping qd (q, qd finite).
  void stop_output(bool damped) noexcept;
  void set_fault(Fault kind, int joint, double value, double limit) noexcept;
  /// tau of the commanded joints clipped to their limits (the TICK_SATURATED flag) and written.
  void write(std::vector<hardware_interface::LoanedCommandInterface> & commands) noexcept;

  std::shared_ptr<EngineModel> model_;
  rd_model law_model_{};
  std::vector<std::string> joints_, command_joints_;
  std::vector<int> index_, others_;
  std::vector<size_t> command_at_, position_at_, velocity_at_;
  std::vector<double> last_valid_q_, zero_;
  std::vector<double> mass_;  // nq x nq: the mass matrix of the hold's pose (its damping's cap)
  StopBehaviour stop_ = StopBehaviour::hold;
  bool has_valid_ = false, state_ok_ = false, limited_ = false;
  int limited_joint_ = -1, missing_reference_ = -1;
  int nq_ = 0;
  int status_ = TICK_OK;
  int64_t clipped_ = 0;
  Fault fault_ = Fault::none;
  bool tracking_latched_ = false;
  int fault_joint_ = -1;
  double fault_value_ = 0.0, fault_limit_ = 0.0;
  uint64_t fault_count_ = 0;
};

/// The one-line reason of a fault of joint `joint` (a name, or empty), e.g. "tracking error of
/// joint 'joint2' is 0.31, above max_tracking_error 0.2: ..." (outside the real-time loop: it
/// allocates).
std::string fault_reason(Fault kind, const std::string & joint, double value, double limit);

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__CONTROLLER_CORE_HPP_
