// The arm's rigid-body dynamics as ros2_control hardware, integrated inside the controller
// manager's own read/write cycle: no simulator process, no topic between the controllers and
// the plant.
//
// Per joint of the <ros2_control> block: one `effort` command interface and `position`,
// `velocity`, `effort` state interfaces (any of the three). Each read() advances the state
// x = (q, qd) by the period the controller manager measured, under the effort written at the
// previous write() held constant (a zero-order hold), with rd_plant_advance (the engine's period of
// a simulated arm, as the simulation and the simulator node step: classical RK4 of the engine's
// direct dynamics, gravity of the model, joint friction of the drive-train YAML).
//
// Hardware parameters (<hardware><param name="...">):
//   robot_model         the robot as the engine's model text (required): what `robot-dynamics
//                       engine-model --urdf ROBOT.urdf [--drivetrain DRIVE.yaml] --strict` prints
//                       (robot_dynamics' ros2_control_block writes it into the block)
//   substeps            RK4 steps per period (default 1)
//   max_step            longest RK4 step [s] (default 0.005): a late period is cut into more
//                       steps, never integrated with a step RK4 is unstable at
//   friction            true/false: the model's joint friction in the plant (default true)
//   coulomb_smoothing   v_s [rad/s]: Coulomb friction Fc tanh(qd / v_s) instead of sign (default 0)
//   initial_positions   comma list in the block's joint order (else each joint's
//                       <state_interface name="position"><param name="initial_value">, else 0)
//   timing_log          CSV file of the per-cycle timing (empty: off), see CycleLog
//   timing_log_cycles   cycles the timing log keeps, the last ones (default 2^20)
//
// The command: efforts beyond the model's effort limits are clipped (a drive's saturation); a
// NaN on some joints is zero effort on those joints; NaN on every joint (ros2_control's "no
// command": before a controller writes, or after one released the interfaces) holds the arm
// where it is with zero velocity (the brakes of a real arm), as the project's simulator node
// does. The effort state is the effort applied during the last period (0 while braked).
#ifndef ROBOT_DYNAMICS_CONTROL__SIMULATED_SYSTEM_HPP_
#define ROBOT_DYNAMICS_CONTROL__SIMULATED_SYSTEM_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hardware_interface/handle.hpp"
#include "hardware_interface/hardware_info.hpp"
#include "hardware_interface/system_interface.hpp"
#include "hardware_interface/types/hardware_interface_return_values.hpp"
#include "rclcpp/duration.hpp"
#include "rclcpp/time.hpp"
#include "rclcpp_lifecycle/state.hpp"

extern "C" {
#include <robot_dynamics_engine/engine.h>
}

namespace robot_dynamics_control
{
class EngineModel;

// A preallocated ring buffer of the controller manager's cycles, for measuring the delay from
// a read (the state a controller sees) to the command written for it. Per cycle: the steady
// clock when read() exposed the new state and when write() took the command [ns], the ROS time
// given to read() [ns] and the commanded effort of every joint [N m or N] (the raw command,
// NaN included). The last `capacity` cycles are kept; write_csv() writes them oldest first.
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

class SimulatedSystem : public hardware_interface::SystemInterface
{
public:
  using CallbackReturn = rclcpp_lifecycle::node_interfaces::LifecycleNodeInterface::CallbackReturn;

  SimulatedSystem() = default;
  ~SimulatedSystem() override;

  CallbackReturn on_init(const hardware_interface::HardwareInfo & info) override;
  std::vector<hardware_interface::StateInterface> export_state_interfaces() override;
  std::vector<hardware_interface::CommandInterface> export_command_interfaces() override;
  CallbackReturn on_activate(const rclcpp_lifecycle::State & previous_state) override;
  CallbackReturn on_deactivate(const rclcpp_lifecycle::State & previous_state) override;
  hardware_interface::return_type read(const rclcpp::Time & time, const rclcpp::Duration & period) override;
  hardware_interface::return_type write(const rclcpp::Time & time, const rclcpp::Duration & period) override;

  // The state in the block's joint order (for tests and tools): positions, velocities, applied efforts.
  const std::vector<double> & positions() const { return position_; }
  const std::vector<double> & velocities() const { return velocity_; }
  const std::vector<double> & efforts() const { return effort_; }
  const CycleLog & cycle_log() const { return log_; }

private:
  // The hardware parameters on_init reads besides substeps_, max_step_ and timing_log_.
  struct PlantParameters
  {
    bool friction = true;
    bool allow_nonphysical_model = false;  // accept a robot_model made without the loader's strict checks
    double smooth = 0.0;  // Coulomb smoothing velocity [rad/s] (0: the sign)
    std::size_t timing_log_cycles = 0;
    std::string robot_model, initial_positions;
  };

  PlantParameters read_parameters();                 // the <hardware> parameters, checked
  std::vector<double> read_joints();                 // joints_, index_; the interfaces' initial positions
  void start_plant(const std::vector<double> & initial, const PlantParameters & p);  // arrays, plant_, a first evaluation
  void save_timing_log();

  std::shared_ptr<EngineModel> model_;
  rd_plant_period plant_{};  // the plant, substeps_, max_step_, max_substeps_
  int nq_ = 0;
  int substeps_ = 1;
  double max_step_ = 0.005;
  std::vector<std::string> joints_;  // the block's joint order
  std::vector<int> index_;           // block joint i -> model joint index_[i]
  std::vector<double> limit_;        // effort limit of block joint i (inf: none)
  // the interfaces, block order
  std::vector<double> command_, position_, velocity_, effort_;
  // the plant, model order: x = (q, qd), u the held joint efforts (NaN: no command), applied the
  // efforts of the last period (0 while braked)
  std::vector<double> x_, u_, applied_;
  bool active_ = false;
  bool reported_ = false;     // one error line, not one per cycle
  bool lagging_ = false;      // one warning when a period is longer than the steps can cover
  int max_substeps_ = 1000;
  std::string timing_log_;
  CycleLog log_;
  std::uint64_t saved_cycles_ = 0;
};

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__SIMULATED_SYSTEM_HPP_
