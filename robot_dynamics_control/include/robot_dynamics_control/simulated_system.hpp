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
//   simulated_external_torque_topic
//                       a topic name (default none): a simulation-only input of external joint
//                       torques, what a push or a contact would apply (a collision monitor's test
//                       input). sensor_msgs/JointState with `name` and `effort` [N m or N]: each
//                       named joint's external torque becomes its effort, the others' zero, until
//                       the next message (an empty one: none). A node of the hardware's own,
//                       <name>_simulated_input, subscribes on a thread of its own; a message naming
//                       an unknown joint, of mismatched lengths or with a non-finite effort is
//                       refused with a warning.
//   simulated_external_wrench_topic
//                       a topic name (default none): a simulation-only input of an external wrench
//                       (a push at the tool), geometry_msgs/WrenchStamped, force [N] and torque
//                       [N m] acting at the origin of the frame simulated_external_wrench_frame,
//                       until the next message (a zero wrench: none). Its axes by header.frame_id:
//                       the base's when empty or the model's base (root link) name, the named
//                       frame's own (they turn with it) when that frame's name; any other
//                       frame_id, or a non-finite value, is refused with a warning. Subscribed by
//                       the same node and thread as the external torque.
//   simulated_external_wrench_frame
//                       the frame the wrench acts at, a link of the model text's frame_names
//                       (required with the topic; an unknown name fails on_init naming the valid ones)
//
// Each period the wrench w = [f; m] becomes the joint torque J(q)^T w, J the frame's Jacobian
// (rd_task_space: base axes, RD_LOCAL_WORLD_ALIGNED, or the frame's, RD_LOCAL) at the state of the
// period's start, held over the period, and is added to the simulated external joint torque.
//
// The command: efforts beyond the model's effort limits are clipped (a drive's saturation); a
// NaN on some joints is zero effort on those joints; NaN on every joint (ros2_control's "no
// command": before a controller writes, or after one released the interfaces) holds the arm
// where it is with zero velocity (the brakes of a real arm), as the project's simulator node
// does. The effort state is the effort applied during the last period (0 while braked). The
// simulated external torque is added to the clipped command (it is no motor's effort: the effort
// state leaves it out, and a joint without a command, NaN, gets none of it). So is the wrench's
// joint torque.
#ifndef ROBOT_DYNAMICS_CONTROL__SIMULATED_SYSTEM_HPP_
#define ROBOT_DYNAMICS_CONTROL__SIMULATED_SYSTEM_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "hardware_interface/handle.hpp"
#include "hardware_interface/hardware_info.hpp"
#include "hardware_interface/system_interface.hpp"
#include "hardware_interface/types/hardware_interface_return_values.hpp"
#include "rclcpp/duration.hpp"
#include "rclcpp/executors/single_threaded_executor.hpp"
#include "rclcpp/node.hpp"
#include "rclcpp/time.hpp"
#include "rclcpp_lifecycle/state.hpp"
#include "realtime_tools/realtime_buffer.h"
#include "geometry_msgs/msg/wrench_stamped.hpp"
#include "sensor_msgs/msg/joint_state.hpp"

extern "C" {
#include <robot_dynamics_engine/engine.h>
}

namespace robot_dynamics_control
{
class EngineModel;

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
  // The command interfaces' values as the controllers wrote them, and the block's joint names.
  const std::vector<double> & commands() const { return command_; }
  const std::vector<std::string> & joint_names() const { return joints_; }

  /// The simulated external joint torques (what simulated_external_torque_topic does; outside the
  /// real-time loop): each joint of `msg.name` gets its `msg.effort` [N m or N], the others zero,
  /// from the next read() on. Returns "" or the reason the message is refused (nothing changes).
  std::string set_external_torque(const sensor_msgs::msg::JointState & msg);
  /// The simulated external wrench (what simulated_external_wrench_topic does; outside the real-time
  /// loop): msg.wrench's force [N] and torque [N m] at the origin of simulated_external_wrench_frame,
  /// in the base's axes (header.frame_id empty or the base's name) or the frame's (its name), from
  /// the next read() on. Returns "" or the reason the message is refused (nothing changes).
  std::string set_external_wrench(const geometry_msgs::msg::WrenchStamped & msg);
  /// The external torques of the last period, in the block's joint order: the joint torques' and
  /// the wrench's J^T w, where a command let them act (else 0).
  const std::vector<double> & external_torques() const { return external_block_; }

private:
  // The hardware parameters on_init reads besides substeps_ and max_step_.
  struct PlantParameters
  {
    bool friction = true;
    bool allow_nonphysical_model = false;  // accept a robot_model made without the loader's strict checks
    double smooth = 0.0;  // Coulomb smoothing velocity [rad/s] (0: the sign)
    std::string robot_model, initial_positions, external_torque_topic, external_wrench_topic, external_wrench_frame;
  };
  // The simulated external wrench: [f; m] and the rd_task reference of its axes; none when !set.
  struct WrenchInput
  {
    bool set = false;
    int reference = RD_LOCAL_WORLD_ALIGNED;
    double w[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  };

  PlantParameters read_parameters();                 // the <hardware> parameters, checked
  std::vector<double> read_joints();                 // joints_, index_; the interfaces' initial positions
  void start_plant(const std::vector<double> & initial, const PlantParameters & p);  // arrays, plant_, a first evaluation
  void start_wrench(const PlantParameters & p);     // wrench_frame_, base_name_, the Jacobian's buffer
  void start_input(const PlantParameters & p);       // the simulated inputs' node, subscriptions and thread
  int add_wrench_torque();                           // external_ += J^T w at x_: RD_OK or the engine's status

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
  // the simulated external torques (model order): the input's buffer, this period's, and u_ + them
  realtime_tools::RealtimeBuffer<std::vector<double>> external_input_;
  std::vector<double> external_, drive_, external_block_;
  std::shared_ptr<rclcpp::Node> input_node_;
  std::shared_ptr<rclcpp::executors::SingleThreadedExecutor> input_executor_;
  rclcpp::Subscription<sensor_msgs::msg::JointState>::SharedPtr input_subscription_;
  rclcpp::Subscription<geometry_msgs::msg::WrenchStamped>::SharedPtr wrench_subscription_;
  // the simulated external wrench: the input's buffer, this period's, its frame (-1: none), the
  // names its frame_id may take, and the frame's Jacobian rows (6 x nq, preallocated)
  realtime_tools::RealtimeBuffer<WrenchInput> wrench_input_;
  WrenchInput wrench_;
  int wrench_frame_ = -1;
  std::string base_name_, wrench_frame_name_;
  std::vector<double> jacobian_;
  std::thread input_thread_;
  bool active_ = false;
  bool reported_ = false;     // one error line, not one per cycle
  bool lagging_ = false;      // one warning when a period is longer than the steps can cover
  int max_substeps_ = 1000;
};

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__SIMULATED_SYSTEM_HPP_
